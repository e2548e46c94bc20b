"""Each library scenario ends the way Kafka really ends (timings and rules from docs/model.md)."""
from engine.scenario.library import ORDER, library
from engine.simulation import Simulation

from .conftest import events


def expiry_window(fault_ms, timeout_ms=18000):
    """A session expires timeout_ms after the ensemble last heard the broker; an idle client pings
    every timeout/3, so that is between timeout - timeout/3 and timeout after the fault."""
    return fault_ms + timeout_ms - timeout_ms // 3, fault_ms + timeout_ms + 100


def test_session_expiry_is_the_timeout_after_the_last_heartbeat(run_library):
    r = run_library("broker-failure-clean-election")
    [expired] = events(r, "session_expired", broker=1)
    assert "no heartbeat for 18000 ms" in expired["reason"]
    lo, hi = expiry_window(5000)
    assert lo <= expired["t_ms"] <= hi


def lost(result):
    return [r for r in result["records"] if r["lost"]]


def test_every_library_scenario_is_listed_and_valid():
    lib = library()
    assert list(lib) == list(ORDER) and len(lib) >= 10
    assert all(doc["description"] for doc in lib.values())


def test_slow_follower_is_shrunk_after_the_lag_by_the_isr_expiration_task(run_library):
    r = run_library("isr-shrink-slow-follower")
    [shrink] = events(r, "isr_shrink", broker=0)
    # isolated at 5 s; lag 30 s; the task runs every 15 s, so 35 s < shrink <= 5 + 45 s (§2.1)
    assert 35000 < shrink["t_ms"] <= 50100
    assert shrink["isr_before"] == [0, 1, 2] and shrink["isr"] == [0, 1]
    assert "replica.lag.time.max.ms 30000" in shrink["reason"]
    assert shrink["leader_epoch"] == 0 and shrink["zk_version"] == 1   # leader write: no epoch bump
    [expand] = events(r, "isr_expand", broker=0)
    assert expand["t_ms"] > 50000 and expand["isr"] == [0, 1, 2]
    assert r["partitions"]["orders-0"]["isr"] == [0, 1, 2] and r["violations"] == []


def test_restarted_follower_rejoins_once_at_the_hw_and_epoch_start(run_library):
    r = run_library("isr-expansion")
    [removed] = events(r, "isr_shrink", by="controller")
    lo, hi = expiry_window(5000)                      # crash at 5 s, 18 s session timeout
    assert lo <= removed["t_ms"] <= hi
    assert removed["leader_epoch"] == 1               # controller-side shrink bumps the epoch (§9.6)
    [expand] = events(r, "isr_expand")
    assert 40000 < expand["t_ms"] < 41000 and "KAFKA-7128" in expand["reason"]
    assert sorted(r["partitions"]["orders-0"]["isr"]) == [0, 1, 2]
    assert lost(r) == [] and r["violations"] == []


def test_isr_change_reaches_the_controller_after_the_blackout(run_library):
    r = run_library("isr-change-propagation")
    [shrink] = events(r, "isr_shrink", broker=1)
    created = [e for e in events(r, "isr_change_notification", stage="created") if e["broker"] == 1][0]
    delay = created["t_ms"] - shrink["t_ms"]
    assert 5000 < delay <= 7500 + 10                   # §4.2: 5.0-7.5 s for an isolated change
    processed = events(r, "isr_change_notification", stage="processed")[0]
    assert processed["broker"] == 0 and processed["t_ms"] - created["t_ms"] < 50
    assert not [p for p in r["zk"] if p.startswith("/isr_change_notification/")]


def test_leader_failure_waits_for_the_session_timeout_then_elects_in_assignment_order(run_library):
    r = run_library("broker-failure-clean-election")
    [elected] = events(r, "leader_elected", kind="clean")
    [expired] = events(r, "session_expired", broker=1)
    assert 0 < elected["t_ms"] - expired["t_ms"] < 50
    assert elected["leader"] == 2 and elected["leader_epoch"] == 1
    assert lost(r) == [] and r["violations"] == []
    acked = {x["id"] for x in r["records"] if x["status"] == "acked"}
    read = {x["id"] for x in r["consumed"]["c1"]}
    assert acked <= read | {x["id"] for x in r["records"] if x["acked_ms"] and x["acked_ms"] > 59000}


def test_min_insync_replicas_rejects_acks_all_but_not_acks_1(run_library):
    r = run_library("not-enough-replicas")
    strict = [x for x in r["records"] if x["producer"] == "strict"]
    relaxed = [x for x in r["records"] if x["producer"] == "relaxed"]
    assert {x["error"] for x in strict if x["status"] == "failed"} >= {"NOT_ENOUGH_REPLICAS"}
    assert not [x for x in relaxed if x["status"] == "failed"]
    errors = events(r, "produce_error", error="NOT_ENOUGH_REPLICAS")
    assert errors and all("min.insync.replicas 2" in e["reason"] for e in errors)
    first = min(e["t_ms"] for e in errors)
    last = max(e["t_ms"] for e in errors)
    shrinks = events(r, "isr_shrink", by="controller")
    [rejoin] = events(r, "isr_expand")
    assert first >= max(e["t_ms"] for e in shrinks) and last < rejoin["t_ms"] + 100


def test_acks_1_loses_what_the_old_leader_acknowledged_alone(run_library):
    r = run_library("acks1-loss-on-failover")
    gone = lost(r)
    assert gone and all(x["acks"] == "1" and 5000 <= x["sent_ms"] <= 10000 for x in gone)
    assert r["violations"] == []                       # acks=1 loss is allowed, not a violation


def test_unclean_election_loses_acknowledged_acks_all_records(run_library):
    r = run_library("unclean-election-loss")
    [unclean] = events(r, "leader_elected", kind="unclean")
    assert unclean["leader"] == 2 and unclean["isr"] == [2]
    [violation] = [v for v in r["violations"] if v["invariant"] == "acked_record_lost"]
    assert violation["t_ms"] == unclean["t_ms"] and len(violation["records"]) == len(lost(r)) > 0


def test_kip101_scenario_1_pre_0_11_truncates_committed_data(run_library):
    r = run_library("kip101-scenario-1-v0.10")
    truncations = events(r, "truncation", broker=3)
    assert truncations and "high watermark" in truncations[0]["reason"]
    [violation] = r["violations"]
    assert violation["invariant"] == "acked_record_lost" and len(violation["records"]) >= 1
    assert r["partitions"]["orders-0"]["leader"] == 3


def test_kip101_scenario_1_with_leader_epochs_keeps_everything(run_library):
    r = run_library("kip101-scenario-1-v2.6")
    assert r["partitions"]["orders-0"]["leader"] == 3
    assert not events(r, "truncation", broker=3)
    assert lost(r) == [] and r["violations"] == []


def test_kip101_scenario_2_pre_0_11_diverges(run_library):
    r = run_library("kip101-scenario-2-v0.10")
    kinds = {v["invariant"] for v in r["violations"]}
    assert kinds == {"replica_divergence", "acked_record_lost"}
    logs = r["partitions"]["orders-0"]["replica_state"]
    assert logs["1"]["log"][1]["id"] != logs["2"]["log"][1]["id"]   # m2 vs m3 at offset 1, forever


def test_kip101_scenario_2_with_leader_epochs_agrees_but_loses_the_unflushed_m2(run_library):
    r = run_library("kip101-scenario-2-v2.6")
    assert [v["invariant"] for v in r["violations"]] == ["acked_record_lost"]
    assert [x["id"] for x in lost(r)] == ["p1-1"]
    logs = r["partitions"]["orders-0"]["replica_state"]
    assert [e["id"] for e in logs["1"]["log"]] == [e["id"] for e in logs["2"]["log"]]
    [trunc] = events(r, "truncation", broker=1)
    assert trunc["to_offset"] == 1 and "OffsetsForLeaderEpoch(epoch 0)" in trunc["reason"]


def test_controller_failover_on_session_expiry(run_library):
    r = run_library("controller-failover-session-expiry")
    elected = events(r, "controller_elected")
    assert [(e["broker"], e["epoch"]) for e in elected] == [(0, 1), (1, 2)]
    lo, hi = expiry_window(5000)
    assert lo <= elected[1]["t_ms"] <= hi
    [resigned] = events(r, "controller_resigned")
    assert resigned["broker"] == 0 and resigned["t_ms"] > 35000
    assert r["controller"] == {"broker": 1, "epoch": 2} and r["violations"] == []


def test_zombie_leader_acks_acks_1_records_that_are_then_truncated(run_library):
    r = run_library("zombie-leader-after-pause")
    gone = lost(r)
    assert gone and all(x["producer"] == "fast" for x in gone)
    assert all(30000 <= x["acked_ms"] < 30100 for x in gone)   # acknowledged by the zombie on resume
    assert not [x for x in r["records"] if x["producer"] == "safe" and x["lost"]]
    assert r["violations"] == []


def test_jepsen_partition_0_10(run_library):
    r = run_library("jepsen-partition-v0.10")
    [shrink] = events(r, "isr_shrink", broker=1)
    assert shrink["isr"] == [1]
    [unclean] = events(r, "leader_elected", kind="unclean")
    assert unclean["leader"] == 2
    assert len(lost(r)) > 500
    assert all(v["invariant"] == "acked_record_lost" for v in r["violations"])


def test_controlled_shutdown_moves_leadership_before_stopping(run_library):
    r = run_library("controlled-shutdown")
    moved = events(r, "leader_elected", kind="controlled_shutdown")
    stopped = [e for e in events(r, "broker_stopped", broker=1)][0]
    assert moved and all(e["t_ms"] <= stopped["t_ms"] and e["previous_leader"] == 1 for e in moved)
    assert lost(r) == [] and r["violations"] == []
    assert events(r, "leader_elected", kind="preferred")


def test_auto_rebalance_moves_leadership_back_to_the_preferred_replica(run_library):
    r = run_library("preferred-leader-election")
    [rebalance] = events(r, "auto_rebalance")
    assert rebalance["t_ms"] == 45022                  # first check 5 s after failover, then every 20 s
    assert r["partitions"]["orders-2"]["leader"] == 2


def test_kip279_scenario_diverges_under_1_1(run_library):
    r = run_library("kip279-fast-leader-changes-v1.1")
    [divergence] = r["violations"]
    assert divergence["invariant"] == "replica_divergence" and "offset 1" in divergence["detail"]
    logs = r["partitions"]["orders-0"]["replica_state"]
    assert logs["2"]["log"][1]["id"] == "p2-0" and logs["1"]["log"][1]["id"] == "p1-1"
    # A hears of epoch 2 only after the heal (held LeaderAndIsr), when B is already down: it
    # follows B in epoch 2 without reconciling, so m2 survives into its epoch 3. The request sent
    # at 11.3 s is retransmitted at 11.5, 11.9 and 12.7 s (200 ms doubling): the heal at 12 s
    # lets the third through.
    [follow] = [e for e in events(r, "become_follower", broker=1) if "epoch 2" in e["reason"]]
    assert 12700 < follow["t_ms"] < 12800
    assert not events(r, "truncation", broker=1)


def test_kip279_scenario_converges_under_2_0(run_library):
    r = run_library("kip279-fast-leader-changes-v2.0")
    [trunc] = events(r, "truncation", broker=2)
    assert "(epoch 1, end offset 2)" in trunc["reason"] and trunc["to_offset"] == 1
    logs = r["partitions"]["orders-0"]["replica_state"]
    assert [e["id"] for e in logs["1"]["log"]] == [e["id"] for e in logs["2"]["log"]] == ["p1-0", "p1-1", "p3-0"]
    assert r["violations"] == [] and [x["id"] for x in r["records"] if x["lost"]] == ["p2-0"]


# -- the AlterIsr / AlterPartition eras (docs/model.md §17) ----------------------------------------

def _metadata_sees(name, version, isr, until_ms, step_ms=2):
    """The first moment broker 0's metadata cache (fed only by UpdateMetadata) has ``isr``."""
    sim = Simulation({**library()[name], "kafka_version": version})
    while sim.now_ms < until_ms:
        sim.advance_to(sim.now_ms + step_ms)
        st = sim.brokers[0].metadata.get("orders-0")
        if st and st["isr"] == isr:
            return sim.now_ms, sim
    return None, sim


def test_isr_shrink_travels_through_zookeeper_in_2_6_and_through_the_controller_in_2_7():
    name = "isr-shrink-zookeeper-vs-controller"
    old = Simulation(library()[name]).run()                    # its own era: 2.6
    [shrink] = events(old, "isr_shrink", broker=1)
    # isolated at 3 s; lag 10000 ms; isr-expiration every 5000 ms (§2.1): the 15 s tick
    assert 15000 <= shrink["t_ms"] < 15100 and shrink["isr"] == [1, 0]
    [created] = events(old, "isr_change_notification", stage="created")
    assert 5000 < created["t_ms"] - shrink["t_ms"] <= 7500 + 10   # §4.2 blackout / tick
    [processed] = events(old, "isr_change_notification", stage="processed")
    assert processed["broker"] == 0 and processed["t_ms"] - created["t_ms"] < 50
    assert not events(old, "alter_partition")
    seen, _ = _metadata_sees(name, "2.6", [1, 0], 25000)
    assert created["t_ms"] <= seen <= processed["t_ms"] + 10    # caches late by 5-7.5 s

    new = Simulation({**library()[name], "kafka_version": "2.7"}).run()
    sent, answered = events(new, "alter_partition")
    assert sent["phase"] == "sent" and sent["api"] == "AlterIsr" and sent["proposed_isr"] == [1, 0]
    assert 0 <= sent["t_ms"] - shrink["t_ms"] <= 50     # same isr-expiration tick, then the 50 ms task
    assert answered["error"] is None and answered["isr"] == [1, 0]
    assert answered["t_ms"] - sent["t_ms"] < 20                 # one round trip + a ZK write
    [commit] = events(new, "isr_shrink", broker=1)
    assert commit["t_ms"] == answered["t_ms"] and "controller accepted AlterIsr" in commit["reason"]
    assert not events(new, "isr_change_notification")
    assert not [p for p in new["zk"] if p.startswith("/isr_change_notification/")]
    seen, _ = _metadata_sees(name, "2.7", [1, 0], 17000)
    assert seen is not None and seen - sent["t_ms"] < 20        # UpdateMetadata within ms
    assert old["violations"] == new["violations"] == []


def test_a_pending_expand_waits_for_the_paused_controller_and_acks_all_is_refused_meanwhile(run_library):
    r = run_library("pending-expand-controller-away")               # 3.3
    [shrink] = events(r, "isr_shrink", broker=1)
    assert 15000 <= shrink["t_ms"] < 15100 and shrink["isr"] == [1]
    [expand_sent] = events(r, "alter_partition", phase="sent", proposed_isr=[1, 2])
    assert 27400 < expand_sent["t_ms"] < 27450 and expand_sent["api"] == "AlterPartition"
    [answer] = events(r, "alter_partition", phase="answered", proposed_isr=[1, 2])
    assert 30000 <= answer["t_ms"] < 30050 and answer["error"] is None   # the pause ends at 30 s
    [expand] = events(r, "isr_expand", broker=1)
    assert expand["t_ms"] == answer["t_ms"] and expand["isr"] == [1, 2]
    # the committed ISR [1] < min.insync.replicas 2 decides admission while the expand is pending
    refused = events(r, "produce_error", error="NOT_ENOUGH_REPLICAS")
    assert [e for e in refused if expand_sent["t_ms"] < e["t_ms"] < answer["t_ms"] - 100]
    assert not [e for e in refused if e["t_ms"] > answer["t_ms"] + 10]
    assert lost(r) == [] and r["violations"] == []
    # 2.6: the leader writes the expand itself at once; the refusals stop at 27.4 s
    old = Simulation({**library()["pending-expand-controller-away"], "kafka_version": "2.6"}).run()
    [old_expand] = events(old, "isr_expand", broker=1)
    assert 27400 < old_expand["t_ms"] < 27450
    assert not [e for e in events(old, "produce_error", error="NOT_ENOUGH_REPLICAS")
                if e["t_ms"] > old_expand["t_ms"] + 10]


def test_kip_841_the_controller_refuses_a_shutting_down_replica_in_3_3_but_not_in_3_0(run_library):
    r = run_library("ineligible-replica-refused")                    # 3.3
    # refused at every new fetch (a record each 100 ms) until broker 3 stops at ~30.3 s
    refused, *again = events(r, "alter_partition", phase="answered", error="INELIGIBLE_REPLICA")
    assert 27400 < refused["t_ms"] < 27450 and refused["proposed_isr"] == [1, 2, 3]
    assert again and all(e["t_ms"] < 30400 for e in again)
    assert not events(r, "isr_expand")
    assert r["partitions"]["orders-0"]["isr_state"] == {"committed": [1, 2], "maximal": [1, 2],
                                                        "pending": None}
    old = Simulation({**library()["ineligible-replica-refused"], "kafka_version": "3.0"}).run()
    [expand] = events(old, "isr_expand", broker=1)
    assert expand["isr"] == [1, 2, 3] and 27400 < expand["t_ms"] < 27450
    [removal] = events(old, "isr_shrink", by="controller")
    assert removal["isr"] == [1, 2] and removal["leader_epoch"] == 1
    assert r["violations"] == old["violations"] == []
