"""The live view draws what engine.view draws, with its O(log) parts made incremental: epoch runs
extended frame by frame, record outcomes counted as they settle, lost records noticed live."""
import pickle

import pytest

from app.runner.live_view import LiveView, MessageTap, partition_entity, sample_messages
from engine.scenario.library import library
from engine.simulation import Simulation
from engine.view import partition_view, records_summary

LIB = library()


def _compare_partitions(sim):
    for topic, spec in sim.topics.items():
        for p in range(spec["partitions"]):
            key = sim.key(topic, p)
            mine = partition_entity(sim, key, tail=12)
            theirs = partition_view(sim, key, 12)
            for a, b in zip(mine["replica_state"], theirs["replica_state"]):
                tail = b.pop("tail")
                assert a.pop("tail") == [tail[0][0] if tail else max(b["log_start_offset"], b["leo"] - 12),
                                         [t[2] for t in tail]]
                if a["lag"] is None:
                    a.pop("lag")
                assert a == b, key
            mine.pop("replica_state"), theirs.pop("replica_state")
            assert mine == theirs


@pytest.mark.parametrize("name", ["kip101-scenario-2-v0.10", "kip101-scenario-1-v0.10", "unclean-election-loss",
                                  "zombie-leader-after-pause", "acks1-loss-on-failover"])
def test_partition_entity_matches_engine_view_through_truncations_and_power_failures(name):
    sim = Simulation(LIB[name])
    step = max(250, sim.scenario["duration_ms"] // 120)
    t = 0
    while not sim.finished:
        t += step
        sim.advance_to(t)
        _compare_partitions(sim)


def test_record_digest_agrees_with_the_engine_at_the_end():
    sim = Simulation(LIB["not-enough-replicas"])
    view = LiveView(sim)
    while not sim.finished:
        sim.advance_to(sim.now_ms + 700)
        view.entities()
    entities = view.entities()
    engine = records_summary(sim)
    mine = entities["records"]
    for status in ("acked", "failed", "pending", "unacknowledged", "total", "errors"):
        assert mine[status] == engine[status], status
    assert mine["errors"].get("NOT_ENOUGH_REPLICAS", 0) > 0, "the scenario's acks=all producer is refused"
    per = mine["by_producer"]
    assert per["relaxed"]["failed"] < per["strict"]["failed"]


def test_lost_acks1_records_are_noticed_before_the_end_of_the_run():
    """acks1-loss-on-failover: records acked by broker 1 after it was cut off are gone once broker 2
    leads; the engine marks them only at the end, the live view as soon as the leader changes."""
    sim = Simulation(LIB["acks1-loss-on-failover"])
    view = LiveView(sim)
    while sim.now_ms < 35000:
        sim.advance_to(sim.now_ms + 200)
        start, fresh = view.new_history()
        dirty = {sim.key(e["topic"], e["partition"]) for e in fresh if e["type"] in ("leader_elected", "truncation")}
        live = view.entities(dirty)["records"]
    assert live["lost"] > 0 and live["lost_acks_all"] == 0
    lost_live = set(view.digest.lost_ids())
    sim.advance_to(sim.scenario["duration_ms"])
    final = view.entities()["records"]
    engine_lost = {r["id"] for r in sim.result()["records"] if r["lost"]}
    assert final["lost"] == len(engine_lost)
    assert lost_live <= engine_lost, "nothing was called lost that the engine does not call lost"


def test_ledger_is_the_newest_records_with_their_fate():
    sim = Simulation(LIB["broker-failure-clean-election"])
    view = LiveView(sim)
    sim.advance_to(3000)
    ledger = view.entities()["ledger"]
    newest = list(sim.records.values())[-len(ledger):]
    assert [row[0] for row in ledger] == [r.id for r in newest]
    assert all(row[5] == r.status for row, r in zip(ledger, newest))


def test_message_tap_sees_short_messages_and_survives_snapshots():
    sim = Simulation(LIB["broker-failure-clean-election"])
    view = LiveView(sim)
    sim.advance_to(1000)
    raw = list(view.tap.sent)
    kinds = {m[3] for m in raw}
    assert any(k.startswith("Fetch") for k in kinds) and any(k.startswith("ZkRequest:") for k in kinds)
    assert all(m[5] - m[4] == 1 for m in raw if not m[6]), "1 ms links: never on the wire at frame time"
    msgs, skipped = view.messages()
    assert len(msgs) + skipped == len(raw) and len(msgs) <= 120
    assert not view.tap.sent, "drained"
    restored = Simulation.restore(sim.snapshot())       # the observer pickles as a fresh, empty tap
    assert isinstance(restored.network.observer, MessageTap) and not restored.network.observer.sent
    assert pickle.loads(pickle.dumps(view.tap)).sent == type(view.tap.sent)()


def test_sampling_keeps_rare_messages_first():
    msgs = [(i, 1, 0, "Fetch", 0, 1, 0) for i in range(200)] + [(999, 0, 1, "LeaderAndIsr", 0, 1, 0), (1000, 1, "zk", "ZkRequest:ping", 0, 1, 0)]
    kept, skipped = sample_messages(msgs, limit=10)
    assert skipped == len(msgs) - 10
    assert kept[0][3] == "LeaderAndIsr" or any(m[3] == "LeaderAndIsr" for m in kept)
    assert [m[0] for m in kept] == sorted(m[0] for m in kept), "sending order is kept"


def test_racks_reach_the_live_view_only_when_the_scenario_has_them():
    """docs/model.md §21.6: the meta names the racks and the partitions with two replicas in one
    rack; each broker entity carries its rack; a scenario without racks gets none of it."""
    doc = {"brokers": 3, "duration_ms": 3000, "racks": {"0": "az-a", "1": "az-a", "2": "az-b"},
           "inter_rack_latency_ms": 2,
           "topics": [{"name": "t", "partitions": 2, "replication_factor": 2,
                       "assignment": {"0": [0, 1], "1": [1, 2]}}]}
    sim = Simulation(doc)
    sim.advance_to(1500)
    view = LiveView(sim)
    meta = view.meta()
    assert meta["racks"] == doc["racks"] and meta["inter_rack_latency_ms"] == 2
    assert meta["same_rack_partitions"] == [{"topic": "t", "partition": 0, "rack": "az-a", "replicas": [0, 1]}]
    entities = view.entities()
    assert [entities[f"b:{b}"]["rack"] for b in range(3)] == ["az-a", "az-a", "az-b"]
    assert entities["p:t-0"]["same_rack"] == {"az-a": [0, 1]} and entities["p:t-1"]["same_rack"] == {}
    plain = LiveView(Simulation({"brokers": 3, "duration_ms": 3000}))
    assert "racks" not in plain.meta()
    assert all("rack" not in e for k, e in plain.entities().items() if k.startswith("b:"))
