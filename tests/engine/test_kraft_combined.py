"""Combined mode (process.roles=broker,controller, docs/model.md §20.11): every broker's process
also hosts a voter of the static quorum; the two roles share the process's fate."""
import json

import pytest

from engine.scenario.document import ScenarioError, load
from engine.simulation import Simulation
from engine.view import cluster_view

FETCH_TIMEOUT = 2000      # controller.quorum.fetch.timeout.ms
ELECTION_TIMEOUT = 1000   # controller.quorum.election.timeout.ms: each wait is in [T, 2T)
SESSION_TIMEOUT = 9000    # broker.session.timeout.ms


def combined(era="4.1", timeline=(), duration_ms=30000, seed=1):
    return {"name": "combined", "kafka_version": era, "brokers": 3, "controllers": "combined",
            "seed": seed, "duration_ms": duration_ms,
            "topics": [{"name": "t", "partitions": 3, "replication_factor": 3}],
            "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "all",
                         "rate_per_s": 10}],
            "timeline": list(timeline)}


def events(result, kind):
    return [e for e in result["history"] if e["type"] == kind]


def at(event):
    return event["t_ms"]


def test_the_voters_are_the_brokers_and_controller_operations_say_to_use_broker():
    doc = load(combined())
    assert doc["controllers"] == "combined"
    with pytest.raises(ScenarioError, match='act on it with \\\\?"broker'):
        load(combined(timeline=[{"op": "pause", "controller": 1, "at_ms": 100}]))
    with pytest.raises(ScenarioError, match="only KRaft"):
        load({**combined(), "kafka_version": "3.7"})
    load(combined(timeline=[{"op": "isolate", "broker": 0, "from": "controllers", "at_ms": 100}]))


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_a_combined_cluster_elects_an_active_controller_among_its_brokers(era):
    sim = Simulation(combined(era, duration_ms=5000))
    result = sim.run()
    assert sorted(result["controller"]["voters"]) == ["0", "1", "2"]
    assert result["controller"]["active"] in (0, 1, 2)
    activated = events(result, "controller_activated")
    # the first election: one election timeout in [T, 2T) plus a few round trips
    assert ELECTION_TIMEOUT <= at(activated[0]) < 2 * ELECTION_TIMEOUT + 100
    assert {e["broker"] for e in events(result, "broker_unfenced")} == {0, 1, 2}
    quorum = cluster_view(sim)["quorum"]
    assert sorted(v["id"] for v in quorum["voters"]) == [0, 1, 2]
    assert [v["id"] for v in quorum["voters"] if v["role"] == "leader"] == [result["controller"]["active"]]
    # brokers read the local Raft client's log: they are caught up with the committed offset
    assert all(b["metadata_offset"] >= result["controller"]["voters"][str(b_id)]["high_watermark"] - 1
               for b_id, b in ((int(k), v) for k, v in result["brokers"].items()))


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
@pytest.mark.parametrize("mode", ["process", "power"])
def test_crashing_the_active_controllers_broker_fails_over_the_quorum_and_the_broker(era, mode):
    before = Simulation(combined(era, duration_ms=9000)).run()
    first = before["controller"]["active"]
    led = {k for k, p in before["partitions"].items() if p["leader"] == first}
    assert led  # leaders spread over the brokers: the controller's broker leads some partitions
    crash_at = 9000
    result = Simulation(combined(era, [{"op": "crash", "broker": first, "mode": mode,
                                        "at_ms": crash_at}], duration_ms=30000)).run()
    stopped = [e for e in events(result, "controller_stopped") if e["controller"] == first]
    assert [at(e) for e in stopped] == [crash_at]  # the voter dies with the broker's process
    new = [e for e in events(result, "controller_activated") if at(e) > crash_at]
    assert new and new[0]["controller"] != first
    # followers notice within fetch.timeout, then at most two election rounds of < 2T each
    assert crash_at < at(new[0]) <= crash_at + FETCH_TIMEOUT + 2 * 2 * ELECTION_TIMEOUT + 100
    fenced = [e for e in events(result, "broker_fenced") if e["broker"] == first]
    # a fresh session for every broker at activation: fenced a session timeout after it (4.1
    # checks every session/8, 3.9 at the exact deadline)
    assert fenced
    assert SESSION_TIMEOUT <= at(fenced[0]) - at(new[0]) <= SESSION_TIMEOUT + SESSION_TIMEOUT // 8 + 50
    assert result["controller"]["active"] == new[0]["controller"]
    assert result["controller"]["voters"][str(first)]["role"] == "stopped"
    # its partitions get new leaders with the fencing (the records of one fence, committed
    # within a few ms of each other), not before the session has expired
    moved = [e for e in events(result, "leader_elected") if at(e) > crash_at]
    assert {f"{e['topic']}-{e['partition']}" for e in moved} == led
    assert all(at(new[0]) + SESSION_TIMEOUT <= at(e) and abs(at(e) - at(fenced[0])) <= 10
               and e["leader"] != first for e in moved)
    for p in result["partitions"].values():
        assert p["leader"] != first and first not in p["isr"]


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_with_two_of_three_brokers_down_there_is_no_active_controller(era):
    result = Simulation(combined(era, [{"op": "crash", "broker": 0, "at_ms": 8000},
                                       {"op": "crash", "broker": 1, "at_ms": 8000}],
                                 duration_ms=25000)).run()
    assert result["controller"]["active"] is None
    assert result["controller"]["voters"]["2"]["role"] != "leader"
    assert not [e for e in events(result, "controller_activated") if at(e) > 8000]


def test_a_restarted_broker_brings_its_voter_back_and_a_paused_one_pauses_it():
    sim = Simulation(combined("4.1", [{"op": "crash", "broker": 2, "at_ms": 6000},
                                      {"op": "restart", "broker": 2, "at_ms": 8000},
                                      {"op": "pause", "broker": 1, "at_ms": 15000}],
                              duration_ms=20000))
    sim.advance_to(7000)
    assert not sim.quorum.voters[2].running
    sim.advance_to(14000)
    assert sim.quorum.voters[2].running and sim.quorum.voters[2].role in ("follower", "leader")
    sim.advance_to(16000)
    assert sim.quorum.voters[1].paused


def test_isolating_a_broker_isolates_its_voter():
    first = Simulation(combined("4.1", duration_ms=9000)).run()["controller"]["active"]
    result = Simulation(combined("4.1", [{"op": "isolate", "broker": first, "at_ms": 9000}],
                                 duration_ms=20000)).run()
    assert result["controller"]["active"] not in (None, first)


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_same_combined_scenario_and_seed_give_identical_results(era):
    doc = combined(era, [{"op": "crash", "broker": 1, "at_ms": 7000},
                         {"op": "restart", "broker": 1, "at_ms": 15000}], 25000)
    a = json.dumps(Simulation(doc).run(), sort_keys=True)
    b = json.dumps(Simulation(doc).run(), sort_keys=True)
    assert a == b
