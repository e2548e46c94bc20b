"""Scenario + seed -> the same run, byte for byte (architecture rule 1)."""
import hashlib
import json
import pickle

from engine.simulation import Simulation

from .randomized import random_scenario


def trace_hash(scenario, engine_version=None):
    digest = hashlib.sha256()

    def trace(event):
        digest.update(json.dumps(event, sort_keys=True).encode())
    result = Simulation(scenario, trace=trace, engine_version=engine_version).run()
    digest.update(json.dumps(result, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def test_200_random_scenarios_run_twice_identically():
    mismatches = []
    for seed in range(200):
        scenario = random_scenario(seed, duration_ms=8000)
        if trace_hash(scenario) != trace_hash(scenario):
            mismatches.append(seed)
    assert mismatches == []


def test_the_seed_changes_the_run_when_there_is_jitter():
    a = random_scenario(5, duration_ms=8000)
    a["network"]["jitter_ms"] = 3
    b = dict(a, seed=a["seed"] + 1)
    assert trace_hash(a) != trace_hash(b)


def test_live_commands_replay_exactly():
    scenario = random_scenario(11, duration_ms=20000, era="2.6")
    scenario["timeline"] = []
    live = Simulation(scenario)
    for at, op in [(2000, {"op": "crash", "broker": 0}),
                   (2000, {"op": "produce", "topic": "t", "count": 5, "acks": "all"}),
                   (9000, {"op": "isolate", "broker": live.broker_ids[-1], "from": "zk"}),
                   (15000, {"op": "heal"})]:
        live.advance_to(at)
        live.apply(op)
    live_result = live.run()
    replayed = Simulation(live.replay_scenario()).run()
    assert json.dumps(live_result, sort_keys=True) == json.dumps(replayed, sort_keys=True)


def test_snapshot_restore_continues_identically():
    scenario = random_scenario(23, duration_ms=20000)
    straight = Simulation(scenario)
    straight.advance_to(9000)
    blob = straight.snapshot()
    resumed = Simulation.restore(blob)
    assert json.dumps(straight.run(), sort_keys=True) == json.dumps(resumed.run(), sort_keys=True)
    assert pickle.loads(blob).now_ms == 9000


def test_a_session_whose_live_commands_made_a_scripted_op_pointless_still_replays():
    from engine.scenario.library import get
    from engine.scenario.document import load
    live = Simulation(get("broker-failure-clean-election"))
    live.advance_to(2000)
    live.apply({"op": "crash", "broker": 1})       # the script crashes broker 1 at 5 s
    result = live.run()
    doc = live.replay_scenario()
    assert doc["recorded"] is True and load(doc)["recorded"] is True
    ignored = [e for e in result["history"] if e["type"] == "fault" and e["reason"].startswith("ignored")]
    assert len(ignored) == 1
    assert json.dumps(Simulation(doc).run(), sort_keys=True) == json.dumps(result, sort_keys=True)


def test_reading_the_result_does_not_change_the_run():
    sim = Simulation(random_scenario(3, duration_ms=8000))
    sim.advance_to(8000)
    first = json.dumps(sim.result(), sort_keys=True)
    assert json.dumps(sim.result(), sort_keys=True) == first
    assert sim.snapshot() == sim.snapshot()


def test_a_result_without_logs_is_the_full_result_minus_the_records():
    """``run(logs=False)`` (what a sweep's summary asks for) leaves out each replica's records and
    nothing else: the same document, key order included, in a ZooKeeper and a KRaft era."""
    for era in ("2.6", "3.9-kraft"):
        scenario = random_scenario(11, duration_ms=8000)
        scenario["kafka_version"] = era
        full = Simulation(scenario).run()
        lean = Simulation(scenario).run(logs=False)
        held = 0
        for partition in full["partitions"].values():
            for replica in partition["replica_state"].values():
                held += len(replica.pop("log"))
        assert held > 0
        assert json.dumps(lean) == json.dumps(full)
