"""KRaft eras (docs/model.md §20): numbers from Kafka's code at 3.9.0 / 4.1.0."""
import json

import pytest

from engine.kraft.partition_change import build_change, new_registration
from engine.scenario.document import ScenarioError, load
from engine.simulation import Simulation


def scenario(era="3.9-kraft", timeline=(), duration_ms=30000, config=None, rf=3, brokers=3):
    return {"name": "kraft", "kafka_version": era, "brokers": brokers, "duration_ms": duration_ms,
            "config": config or {},
            "topics": [{"name": "t", "partitions": 1, "replication_factor": rf}],
            "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 5}],
            "timeline": list(timeline)}


def events(result, kind):
    return [e for e in result["history"] if e["type"] == kind]


def test_default_quorum_is_three_dedicated_voters_not_colliding_with_brokers():
    sc = load(scenario())
    assert sc["controllers"] == [3000, 3001, 3002]
    assert "controllers" not in load({**scenario(), "kafka_version": "2.6"})


def test_zookeeper_operations_are_errors_in_kraft_eras():
    with pytest.raises(ScenarioError, match="ZooKeeper"):
        load(scenario(timeline=[{"op": "expire_session", "broker": 0, "at_ms": 100}]))
    with pytest.raises(ScenarioError, match="only KRaft"):
        load({**scenario(era="2.6"), "controllers": [3000]})


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_a_three_voter_quorum_survives_one_voter_down_but_not_two(era):
    one = Simulation(scenario(era, [{"op": "crash", "controller": 3000, "at_ms": 3000},
                                    {"op": "crash", "broker": 0, "at_ms": 10000}])).run()
    assert one["controller"]["active"] is not None
    assert events(one, "broker_fenced")  # metadata still makes progress
    sim = Simulation(scenario(era, [{"op": "crash", "controller": 3000, "at_ms": 3000},
                                    {"op": "crash", "controller": 3001, "at_ms": 3000},
                                    {"op": "crash", "controller": 3002, "at_ms": 3000},
                                    {"op": "restart", "controller": 3002, "at_ms": 3100},
                                    {"op": "crash", "broker": 0, "at_ms": 10000}]))
    sim.advance_to(5000)
    committed = sim.quorum.high_watermark()
    result = sim.run()
    assert result["controller"]["active"] is None
    assert sim.quorum.high_watermark() == committed  # no majority: nothing commits
    assert not events(result, "broker_fenced")


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_failover_after_the_active_controller_crashes_is_bounded_by_the_timeouts(era):
    sim = Simulation(scenario(era, duration_ms=15000))
    sim.advance_to(4000)
    active = sim.quorum.active
    sim.apply({"op": "crash", "controller": active})
    result = sim.run()
    elected = [e for e in events(result, "controller_activated") if e["t_ms"] > 4000]
    assert elected and elected[0]["controller"] != active
    # fetch timeout 2000 after the last fetch (< 500 ms before the crash), then at most one
    # election timeout [1000, 2000) (+ a 0/100 ms backoff in 3.9) and a pre-vote round in 4.1
    delay = elected[0]["t_ms"] - 4001
    assert 1500 <= delay <= 2000 + 2000 + 100 + 50


@pytest.mark.parametrize("era,window", [("3.9-kraft", (0, 1)), ("4.1", (0, 1125))])
def test_a_crashed_broker_is_fenced_session_timeout_after_its_last_heartbeat(era, window):
    result = Simulation(scenario(era, [{"op": "crash", "broker": 0, "at_ms": 10000}])).run()
    beats = [e for e in result["history"] if e["type"] == "broker_started" and e["broker"] == 0]
    assert beats
    fenced = events(result, "broker_fenced")
    assert [e["broker"] for e in fenced] == [0]
    # last heartbeat reached the controller within (10000 - 2000 - rtt, 10000]
    assert 10000 + 7000 - 10 < fenced[0]["t_ms"] <= 10000 + 9000 + window[1] + 10
    change = [e for e in events(result, "partition_change") if e["t_ms"] <= fenced[0]["t_ms"]][-1]
    assert change["leader"] != 0 and 0 not in change["isr"]
    assert change["leader_epoch"] == 1 and change["partition_epoch"] == 1


def test_restarted_broker_is_unfenced_when_caught_up_and_rejoins_the_isr():
    result = Simulation(scenario("3.9-kraft", [{"op": "crash", "broker": 0, "at_ms": 10000},
                                               {"op": "restart", "broker": 0, "at_ms": 20000}])).run()
    unfenced = [e for e in events(result, "broker_unfenced") if e["t_ms"] > 20000]
    assert unfenced and unfenced[0]["broker"] == 0
    assert sorted(result["partitions"]["t-0"]["isr"]) == [0, 1, 2]
    assert result["brokers"]["0"]["fenced"] is False


def test_controlled_shutdown_through_heartbeats_moves_leadership_then_grants():
    result = Simulation(scenario("4.1", [{"op": "shutdown", "broker": 0, "at_ms": 8000}])).run()
    started = events(result, "controlled_shutdown_started")
    granted = events(result, "controlled_shutdown_granted")
    assert started and granted and started[0]["t_ms"] < granted[0]["t_ms"] < 8000 + 3000
    moved = [e for e in events(result, "partition_change") if e["t_ms"] >= 8000][0]
    assert moved["leader"] == 1 and 0 not in moved["isr"]
    assert result["brokers"]["0"]["state"] == "stopped"
    assert not [v for v in result["violations"] if v["invariant"] == "acked_record_lost"]


def test_elr_after_shrink_below_min_isr_in_41_and_none_in_39():
    timeline = [{"op": "crash", "broker": 2, "at_ms": 8000}, {"op": "crash", "broker": 1, "at_ms": 20000}]
    cfg = {"min.insync.replicas": 2}
    r41 = Simulation(scenario("4.1", timeline, 40000, cfg)).run()["partitions"]["t-0"]
    assert r41["isr"] == [0] and r41["elr"] == [1]
    r39 = Simulation(scenario("3.9-kraft", timeline, 40000, cfg)).run()["partitions"]["t-0"]
    assert r39["isr"] == [0] and r39["elr"] == []


def test_last_isr_member_lost_with_and_without_elr():
    """docs/model.md §20.6 (KIP-966 worked example): RF 3, min ISR 2, unclean off."""
    reg = {**new_registration([1, 2, 3], [1], 1), "elr": [2]}
    active = {2, 3}
    no_elr, _ = build_change({**reg, "elr": []}, [], lambda b: b in active, False, 2)
    assert no_elr == {"leader": -1}  # the ISR keeps its last member
    elr, _ = build_change(reg, [], lambda b: b in active, True, 2)
    assert elr == {"leader": 2, "isr": [2], "elr": [1]} or elr["leader"] == 2
    fenced_all, _ = build_change(reg, [], lambda b: False, True, 2)
    assert fenced_all == {"leader": -1, "isr": [], "elr": [1, 2], "last_known_elr": [1]}


def test_alter_partition_answers():
    from engine.kraft.metadata_image import MetadataImage
    from engine.kraft.quorum_controller import validate_alter
    image = MetadataImage()
    for b in (1, 2, 3):
        image.brokers[b] = {"broker_epoch": b, "fenced": b == 3, "in_controlled_shutdown": False, "offset": b}
    reg = {**new_registration([1, 2, 3], [1, 2], 1), "leader_epoch": 4, "partition_epoch": 7}
    ask = {"leader_epoch": 4, "zk_version": 7, "new_isr": [1, 2]}
    assert validate_alter(image, 1, reg, ask) is None
    assert validate_alter(image, 1, reg, {**ask, "leader_epoch": 3}) == "FENCED_LEADER_EPOCH"
    assert validate_alter(image, 1, reg, {**ask, "zk_version": 6}) == "INVALID_UPDATE_VERSION"
    assert validate_alter(image, 1, reg, {**ask, "zk_version": 8}) == "NOT_CONTROLLER"
    assert validate_alter(image, 1, reg, {**ask, "new_isr": [1, 2, 3]}) == "INELIGIBLE_REPLICA"


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_same_scenario_and_seed_give_identical_results(era):
    doc = scenario(era, [{"op": "crash", "controller": 3001, "at_ms": 4000},
                         {"op": "crash", "broker": 0, "at_ms": 9000}], 20000)
    a = json.dumps(Simulation(doc).run(), sort_keys=True)
    b = json.dumps(Simulation(doc).run(), sort_keys=True)
    assert a == b


def test_controller_operations_are_checked_and_live_ones_follow_the_voters_states():
    with pytest.raises(ScenarioError, match="does not exist"):
        load(scenario(timeline=[{"op": "crash", "controller": 7, "at_ms": 100}]))
    with pytest.raises(ScenarioError, match="act on it with"):
        load({**scenario(timeline=[{"op": "crash", "controller": 0, "at_ms": 100}]),
              "controllers": "combined"})
    with pytest.raises(ScenarioError, match="also broker ids"):
        load({**scenario(), "controllers": [0, 3000, 3001]})
    doc = load(scenario(timeline=[{"op": "isolate", "broker": 0, "from": "controllers", "at_ms": 100},
                                  {"op": "cut", "from": "controllers", "to": 1, "at_ms": 200}]))
    assert doc["timeline"][0]["from"] == "controllers"
    sim = Simulation(scenario(duration_ms=10000))
    sim.advance_to(3000)
    sim.apply({"op": "crash", "controller": 3001})
    sim.advance_to(4000)
    with pytest.raises(ScenarioError):
        sim.apply({"op": "crash", "controller": 3001})
    sim.apply({"op": "restart", "controller": 3001})
    sim.advance_to(6000)
    assert sim.quorum.voters[3001].running and sim.quorum.voters[3001].role == "follower"


@pytest.mark.parametrize("era,disrupted", [("3.9-kraft", True), ("4.1", False)])
def test_a_rejoining_partitioned_voter_disrupts_the_leader_without_pre_vote_only(era, disrupted):
    """KIP-996: cut off, a 3.9 voter keeps bumping its epoch with every candidacy and its Vote
    makes the leader step down when it is back; a 4.1 voter only asks for pre-votes, which a
    follower that fetches from its leader refuses."""
    sim = Simulation(scenario(era, duration_ms=30000))
    sim.advance_to(4000)
    active = sim.quorum.active
    other = [v for v in sim.quorum.voter_ids if v != active][0]
    sim.apply({"op": "isolate", "controller": other})
    sim.advance_to(15000)
    sim.apply({"op": "heal"})
    result = sim.run()
    stepped_down = [e for e in events(result, "controller_deactivated") if e["t_ms"] > 15000]
    assert bool(stepped_down) == disrupted
    assert result["controller"]["active"] is not None
    assert result["controller"]["voters"][str(other)]["role"] == "follower"
    assert (result["controller"]["raft_epoch"] > 2) == disrupted


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_unclean_election_is_honoured_and_marks_the_leader_recovering(era):
    """KAFKA-12670 (3.9.0): the controller reads unclean.leader.election.enable; the unclean
    leader is RECOVERING (KIP-704) until its first accepted AlterPartition."""
    timeline = [{"op": "crash", "broker": 1, "at_ms": 5000},
                {"op": "crash", "broker": 0, "at_ms": 25000},
                {"op": "restart", "broker": 1, "at_ms": 40000},
                {"op": "restart", "broker": 0, "at_ms": 50000}]
    cfg = {"unclean.leader.election.enable": True, "eligible.leader.replicas.version": 0} \
        if era == "4.1" else {"unclean.leader.election.enable": True}
    result = Simulation(scenario(era, timeline, 60000, cfg, rf=2, brokers=2)).run()
    unclean = [e for e in events(result, "leader_elected") if e["kind"] == "unclean"]
    assert unclean and unclean[0]["leader"] == 1 and 40000 < unclean[0]["t_ms"] < 41000
    recovering = [e for e in events(result, "partition_change") if e.get("leader_recovery_state")]
    assert [e["leader_recovery_state"] for e in recovering][:2] == ["RECOVERING", "RECOVERED"]
    assert result["partitions"]["t-0"]["leader_recovery_state"] == "RECOVERED"


def test_a_snapshot_mid_run_continues_exactly():
    doc = scenario("4.1", [{"op": "crash", "controller": 3001, "at_ms": 4000},
                           {"op": "shutdown", "broker": 1, "at_ms": 6000}], 20000)
    whole = Simulation(doc).run()
    sim = Simulation(doc)
    sim.advance_to(6500)
    resumed = Simulation.restore(sim.snapshot()).run()
    assert json.dumps(resumed, sort_keys=True) == json.dumps(whole, sort_keys=True)
