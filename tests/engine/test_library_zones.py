"""The three zone stories of the library (issue 32, item 6; docs/model.md §21): losing one
availability zone with rack-aware placement, the same failure with two replicas in one zone, and
that layout with unclean election. Numbers are Kafka 2.6's: zookeeper.session.timeout.ms 18000,
min.insync.replicas 2, the producer retrying until delivery.timeout.ms."""
from engine.scenario.library import library
from engine.scenario.racks import same_rack_partitions
from engine.simulation import Simulation

from .conftest import events

ZONES = {"0": "az-a", "1": "az-a", "2": "az-b", "3": "az-b", "4": "az-c", "5": "az-c"}


def acked(result, lo, hi, partition=None):
    return [r for r in result["records"] if r["status"] == "acked" and lo <= r["acked_ms"] < hi
            and (partition is None or r["partition"] == partition)]


def lost(result):
    return [r for r in result["records"] if r["lost"]]


def zone_of(broker):
    return ZONES[str(broker)]


def test_the_three_stories_share_one_cluster_of_three_zones():
    lib = library()
    docs = [lib[name] for name in ("lose-one-zone", "two-replicas-in-one-zone", "two-replicas-in-one-zone-unclean")]
    assert all(doc["racks"] == ZONES and doc["brokers"] == 6 and doc["kafka_version"] == "2.6" for doc in docs)
    assert all(doc["config"]["min.insync.replicas"] == 2 for doc in docs)
    assert all(c["acks"] == "all" for doc in docs for c in doc["clients"] if c["type"] == "producer")


def test_rack_aware_placement_puts_every_partition_in_three_zones(run_library):
    r = run_library("lose-one-zone")
    for key, p in r["partitions"].items():
        assert sorted(zone_of(b) for b in p["replicas"]) == ["az-a", "az-b", "az-c"], key
    sim = Simulation(library()["lose-one-zone"])
    assert same_rack_partitions(sim.scenario, sim.topics) == []


def test_losing_one_zone_loses_nothing_and_writes_continue_at_min_isr(run_library):
    r = run_library("lose-one-zone")
    [fault] = events(r, "fault", op="crash")
    assert fault["t_ms"] == 10000 and fault["rack"] == "az-b" and fault["brokers"] == [2, 3]
    # the controller learns of the dead brokers when their sessions expire: 18 s after the last
    # heartbeat (an idle client pings every 6 s), so between 22 s and 28.1 s
    expired = events(r, "session_expired")
    assert sorted(e["broker"] for e in expired) == [2, 3]
    assert all(22000 <= e["t_ms"] <= 28100 for e in expired)
    [moved] = events(r, "leader_elected", kind="clean")
    assert moved["previous_leader"] == 2 and zone_of(moved["leader"]) != "az-b" and len(moved["isr"]) == 2
    # every partition is left with two in-sync replicas, one in each surviving zone
    for e in events(r, "isr_shrink", by="controller") + [moved]:
        assert len(e["isr"]) == 2 and {zone_of(b) for b in e["isr"]} == {"az-a", "az-c"}
    assert not events(r, "produce_error", error="NOT_ENOUGH_REPLICAS")
    t_known = max(e["t_ms"] for e in expired)
    assert not acked(r, 10500, t_known)                   # acks=all waits for the dead followers
    assert len(acked(r, t_known, 45000)) > 400             # then the backlog and new writes go through
    assert lost(r) == [] and r["violations"] == []


def test_two_replicas_in_one_zone_block_acks_all_with_not_enough_replicas(run_library):
    r = run_library("two-replicas-in-one-zone")
    sim = Simulation(library()["two-replicas-in-one-zone"])
    assert [(e["partition"], e["rack"], e["replicas"]) for e in same_rack_partitions(sim.scenario, sim.topics)] == [
        (0, "az-a", [0, 1]), (1, "az-b", [2, 3]), (2, "az-b", [2, 3])]
    expired = events(r, "session_expired")
    t_known = max(e["t_ms"] for e in expired)
    assert 22000 <= t_known <= 28100
    [moved] = events(r, "leader_elected", kind="clean")
    assert (moved["partition"], moved["leader"], moved["isr"]) == (2, 4, [4])
    last = {e["partition"]: e["isr"] for e in events(r, "isr_shrink", by="controller")}
    assert last == {0: [0, 1], 1: [1]}
    refused = events(r, "produce_error", error="NOT_ENOUGH_REPLICAS")
    assert len(refused) > 100 and {e["partition"] for e in refused} == {1, 2}
    assert all(t_known <= e["t_ms"] < 45100 for e in refused)
    assert all("1 < min.insync.replicas 2" in e["reason"] for e in refused)
    assert len(acked(r, 10500, 45000)) < 10                # blocked until az-b is back
    assert len(acked(r, 45000, 46000)) > 500               # then the retried backlog is acknowledged
    assert lost(r) == [] and r["violations"] == []
    assert not [x for x in r["records"] if x["status"] == "failed"]


def test_unclean_election_after_a_zone_failure_loses_what_only_that_zone_held(run_library):
    r = run_library("two-replicas-in-one-zone-unclean")
    [moved] = events(r, "leader_elected", kind="controlled_shutdown")
    assert moved["t_ms"] < 5100 and moved["partition"] == 1 and moved["isr"] == [2, 3]
    offline = events(r, "partition_offline", partition=1)
    assert offline and all(28000 <= e["t_ms"] <= 34100 for e in offline)
    [unclean] = events(r, "leader_elected", kind="unclean")
    assert unclean["partition"] == 1 and unclean["leader"] == 1 and unclean["isr"] == [1]
    assert 40000 <= unclean["t_ms"] < 40100
    truncations = events(r, "truncation", partition=1)
    assert sorted(e["broker"] for e in truncations) == [2, 3]
    assert all(e["t_ms"] >= 55000 and e["to_offset"] < e["from_offset"] for e in truncations)
    gone = lost(r)
    # exactly what orders-1 acknowledged while its ISR was [2, 3], both in az-b
    assert gone and all(x["status"] == "acked" and x["partition"] == 1 for x in gone)
    assert all(5000 < x["acked_ms"] < 15000 for x in gone)
    assert {x["id"] for x in gone} == {x["id"] for x in acked(r, 5100, 15000, partition=1)}
    assert len(gone) == truncations[0]["from_offset"] - truncations[0]["to_offset"]
    assert {v["invariant"] for v in r["violations"]} >= {"acked_record_lost"}


def test_the_same_failures_lose_nothing_with_unclean_off_or_with_rack_aware_placement():
    doc = library()["two-replicas-in-one-zone-unclean"]
    clean = Simulation({**doc, "config": {"min.insync.replicas": 2}}).run()
    assert not events(clean, "leader_elected", kind="unclean") and lost(clean) == []
    back = [e for e in events(clean, "leader_elected", partition=1) if e["t_ms"] >= 55000]
    assert back and back[0]["leader"] in (2, 3)           # offline until az-b returns
    aware = Simulation({**doc, "topics": library()["lose-one-zone"]["topics"]}).run()
    assert not events(aware, "partition_offline") and lost(aware) == [] and aware["violations"] == []
