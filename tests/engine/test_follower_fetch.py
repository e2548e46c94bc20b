"""Follower fetching, KIP-392 (docs/model.md §21.8, docs/scenario-format.md §4.3): a consumer with
``client.rack`` reads from the follower of its rack when the leader's ``replica.selector.class``
is the rack-aware selector, never past that follower's high watermark, and goes back to the
leader when the follower dies or answers OFFSET_OUT_OF_RANGE; the era rules that changed since 2.4.
"""
import copy
from types import SimpleNamespace

import pytest

from engine.eras import ERAS, LEADER_SELECTOR, RACK_AWARE_SELECTOR
from engine.result import build_result
from engine.scenario.document import ScenarioError, load
from engine.server.partition import RemoteReplica
from engine.server.read_replica import ReadReplicaSelection, rack_aware_select
from engine.simulation import Simulation
from engine.view import cluster_view

RACKS = {"0": "az-a", "1": "az-b", "2": "az-c"}


def scenario(version="2.6", selector=RACK_AWARE_SELECTOR, timeline=(), duration_ms=12000, **extra):
    config = {} if selector is None else {"replica.selector.class": selector}
    doc = {"name": "ff", "seed": 1, "kafka_version": version, "brokers": 3, "duration_ms": duration_ms,
           "racks": dict(RACKS), "inter_rack_latency_ms": 3,
           "network": {"latency_ms": 2, "jitter_ms": 0}, "config": config,
           "topics": [{"name": "orders", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [0, 1, 2]}}],
           "clients": [{"name": "p1", "type": "producer", "topic": "orders", "acks": "all",
                        "rate_per_s": 20},
                       {"name": "cb", "type": "consumer", "topic": "orders", "client.rack": "az-b",
                        "auto.offset.reset": "earliest"},
                       {"name": "cl", "type": "consumer", "topic": "orders",
                        "auto.offset.reset": "earliest"}],
           "timeline": list(timeline)}
    if version in ("3.9-kraft", "4.1"):
        doc["racks"].update({"3000": "az-a", "3001": "az-b", "3002": "az-c"})
    doc.update(extra)
    return doc


def run(doc, follower_hw=None):
    """The finished simulation; ``follower_hw`` (a list) collects every replica HW move the
    invariants see: (t_ms, broker, key, hw)."""
    sim = Simulation(doc)
    if follower_hw is not None:
        seen = sim.invariants.on_hw

        def on_hw(broker, key, log):
            follower_hw.append((sim.now_ms, broker.node_id, key, log.hw))
            seen(broker, key, log)
        sim.invariants.on_hw = on_hw
    sim.advance_to(doc["duration_ms"])
    return sim


def replica_events(sim, consumer="cb"):
    return [e for e in sim.history if e["type"] == "consumer_read_replica" and e["consumer"] == consumer]


# -- the rack's follower serves the consumer ---------------------------------------------------------
@pytest.mark.parametrize("version", ["2.4", "2.6", "3.0", "3.3", "3.7", "3.9-kraft", "4.1"])
def test_consumer_reads_from_the_follower_of_its_rack(version):
    sim = run(scenario(version))
    named = replica_events(sim)
    assert named[0]["replica"] == 1 and named[0]["leader"] == 0
    assert all(e["replica"] == 1 for e in named)     # never forgotten in a quiet run
    reads = sim.consumed["cb"]
    assert len(reads) > 150
    assert {r.get("replica") for r in reads} == {1}   # every record from broker 1 (az-b)
    # the consumer without a rack reads from the leader: no "replica" in its records
    assert sim.consumed["cl"] and all("replica" not in r for r in sim.consumed["cl"])
    assert [r["offset"] for r in reads] == list(range(len(reads)))   # nothing skipped or repeated


def test_reads_never_pass_the_followers_high_watermark():
    """Each record read from broker 1 was below broker 1's HW when broker 1 served it (the answer
    takes the 2 ms in-rack latency), and broker 1's HW trails the leader's: one fetch round."""
    moves = []
    doc = scenario("3.7")
    sim = run(doc, moves)
    mine = [(t, hw) for t, broker, key, hw in moves if broker == 1 and key == "orders-0"]
    assert mine

    def follower_hw_at(t):
        return max([hw for when, hw in mine if when <= t], default=0)
    reads = [r for r in sim.consumed["cb"] if r.get("replica") == 1]
    assert reads
    for r in reads:
        assert r["offset"] < follower_hw_at(r["at_ms"] - 2), r
    # the leader's HW passes each offset first; the follower's a fetch round later
    leader_moves = [(e["t_ms"], e["hw"]) for e in sim.history
                    if e["type"] == "high_watermark" and e["broker"] == 0]

    def first_time(timeline, offset):
        return min(t for t, hw in timeline if hw > offset)
    lags = [first_time(mine, r["offset"]) - first_time(leader_moves, r["offset"]) for r in reads]
    assert min(lags) > 0
    # the rack-less consumer, at the leader, reads each offset before the az-b one does
    leader_read = {r["offset"]: r["at_ms"] for r in sim.consumed["cl"]}
    assert sum(1 for r in reads if r["at_ms"] > leader_read.get(r["offset"], 1 << 60)) > len(reads) // 2


def test_result_adds_replica_only_to_follower_reads():
    sim = run(scenario("2.6"))
    result = build_result(sim)
    first = result["consumed"]["cb"][0]
    assert list(first) == ["id", "topic", "partition", "offset", "at_ms", "replica"]
    assert list(result["consumed"]["cl"][0]) == ["id", "topic", "partition", "offset", "at_ms"]


# -- without the rack-aware selector, the leader ----------------------------------------------------------
@pytest.mark.parametrize("selector", [None, LEADER_SELECTOR])
def test_without_the_rack_aware_selector_the_leader_serves(selector):
    sim = run(scenario("3.7", selector=selector))
    assert replica_events(sim) == []
    assert len(sim.consumed["cb"]) > 150
    assert all("replica" not in r for r in sim.consumed["cb"])


def test_a_rack_without_a_follower_reads_from_the_leader():
    doc = scenario("3.7")
    doc["clients"][1]["client.rack"] = "az-z"
    sim = run(doc)
    assert replica_events(sim) == []
    assert all("replica" not in r for r in sim.consumed["cb"])


def test_a_consumer_in_the_leaders_rack_reads_from_the_leader():
    doc = scenario("3.7")
    doc["clients"][1]["client.rack"] = "az-a"
    sim = run(doc)
    assert replica_events(sim) == [] and all("replica" not in r for r in sim.consumed["cb"])


# -- era rules -------------------------------------------------------------------------------------------
def first_follower_read_ms(sim):
    return min(r["at_ms"] for r in sim.consumed["cb"] if r.get("replica") == 1)


def test_the_redirect_waits_fetch_max_wait_before_3_3():
    """KAFKA-13767 (3.3.0): the leader's answer naming a follower is sent at once; before, it sat
    in the fetch purgatory for fetch.max.wait.ms (500)."""
    old, new = run(scenario("3.0")), run(scenario("3.3"))
    named_old, named_new = replica_events(old)[0]["t_ms"], replica_events(new)[0]["t_ms"]
    assert named_old - named_new >= 450
    reset = next(e["t_ms"] for e in old.history if e["type"] == "consumer_reset" and e["consumer"] == "cb")
    assert named_old >= reset + 500


def test_follower_reads_wait_fetch_max_wait_before_3_3_2():
    """KAFKA-14334 (3.3.2): a follower whose HW moves completes the consumer fetches parked on it;
    before, each waited out fetch.max.wait.ms — the az-b consumer read every ~500 ms."""
    for version, gaps in (("3.0", (480, 560)), ("3.3", (40, 60))):
        sim = run(scenario(version))
        times = sorted({r["at_ms"] for r in sim.consumed["cb"]})[2:]
        steps = [b - a for a, b in zip(times, times[1:])]
        median = sorted(steps)[len(steps) // 2]
        assert gaps[0] <= median <= gaps[1], (version, median)


def stub_leader(version, isr, remotes, live=(0, 1, 2)):
    broker = SimpleNamespace(config={"replica.selector.class": RACK_AWARE_SELECTOR},
                             sim=SimpleNamespace(scenario={"racks": RACKS}), live_brokers=dict.fromkeys(live),
                             era=ERAS[version], node_id=0, rack="az-a")
    part = SimpleNamespace(remotes=remotes, isr=isr, log=SimpleNamespace(leo=100))
    return broker, part


def remote(leo, caught_up_ms=0):
    r = RemoteReplica()
    r.leo, r.log_start_offset, r.last_caught_up_ms = leo, 0, caught_up_ms
    return r


def test_isr_only_from_3_3_2():
    """KAFKA-14372 (3.3.2, 3.4.0): a follower out of the ISR is no preferred read replica."""
    for version, expected in (("3.0", 1), ("3.3", None), ("4.1", None)):
        broker, part = stub_leader(version, [0, 2], {1: remote(80), 2: remote(100)})
        assert ReadReplicaSelection.preferred_read_replica(broker, part, "az-b", 50, 1000) == expected


def test_candidates_must_hold_the_fetch_offset_and_be_alive():
    broker, part = stub_leader("3.7", [0, 1, 2], {1: remote(40), 2: remote(100)})
    assert ReadReplicaSelection.preferred_read_replica(broker, part, "az-b", 50, 1000) is None
    assert ReadReplicaSelection.preferred_read_replica(broker, part, "az-b", 40, 1000) == 1
    broker, part = stub_leader("3.7", [0, 1, 2], {1: remote(100), 2: remote(100)}, live=(0, 2))
    assert ReadReplicaSelection.preferred_read_replica(broker, part, "az-b", 40, 1000) is None


def test_rack_aware_select_as_kafka():
    leader = (0, "a", 100, 0)
    same = [(1, "b", 90, 5), (2, "b", 95, 50), (3, "b", 95, 10), (4, "c", 100, 0)]
    assert rack_aware_select("", leader, same) is leader
    assert rack_aware_select("z", leader, same) is leader
    assert rack_aware_select("a", leader, same) is leader
    assert rack_aware_select("b", leader, same)[0] == 3   # highest LEO, then least time behind
    tie = [(1, "b", 95, 10), (3, "b", 95, 10)]
    assert rack_aware_select("b", leader, tie)[0] == 3    # then the highest id


# -- back to the leader -----------------------------------------------------------------------------------
def crash_follower(version):
    return run(scenario(version, timeline=[{"at_ms": 4000, "op": "crash", "broker": 1}],
                        duration_ms=30000))


def test_follower_crash_sends_the_consumer_back_to_the_leader():
    """3.3.2+ (KAFKA-14379): the failed fetch forgets the replica at once. Before, the consumer
    keeps the replica until its metadata drops the dead broker (the ZooKeeper session expires,
    zookeeper.session.timeout.ms 18000 in "2.6")."""
    for version, by_ms in (("3.7", 4000 + 1000), ("2.6", 4000 + 18000 + 3000)):
        sim = crash_follower(version)
        back = [e for e in replica_events(sim) if e["replica"] is None]
        assert back and back[0]["t_ms"] <= by_ms, (version, back[:1])
        if version == "2.6":
            assert back[0]["t_ms"] >= 4000 + 6000   # not before the session expired
            # the controller's removal of broker 1 from the ISR bumps the leader epoch (§9.3),
            # and the new epoch in the metadata clears the replica (maybeValidatePosition...)
            assert "the metadata names leader 0 in epoch" in back[0]["reason"]
        reads = sim.consumed["cb"]
        after = [r for r in reads if r["at_ms"] > back[0]["t_ms"] + 1000]
        assert after and all("replica" not in r for r in after)   # from leader 0 now
        assert [r["offset"] for r in reads] == list(range(len(reads)))   # no gap, no repeat


def test_offset_out_of_range_from_the_follower_forgets_it_without_a_reset():
    """Fetcher (2.4.0 - 4.1.0): OFFSET_OUT_OF_RANGE with a preferred read replica set clears it
    and fetches from the leader again; only without one is the position reset."""
    sim = Simulation(scenario("2.6"))
    sim.advance_to(3000)
    cb = sim.clients["cb"]
    assert cb.read_replicas["orders-0"][0] == 1
    position = cb.positions["orders-0"]
    cb.in_flight[1] = True
    cb._on_fetch((1, {"orders-0": {"fetch_offset": position}}),
                 {"partitions": {"orders-0": {"error": "OFFSET_OUT_OF_RANGE", "leo": position - 5}}}, None)
    assert "orders-0" not in cb.read_replicas
    assert cb.positions["orders-0"] == position and "orders-0" not in cb.resetting
    assert "OFFSET_OUT_OF_RANGE" in replica_events(sim)[-1]["reason"]
    # from the leader, the same answer resets the position (auto.offset.reset=earliest)
    cb.in_flight[0] = True
    cb._on_fetch((0, {"orders-0": {"fetch_offset": position}}),
                 {"partitions": {"orders-0": {"error": "OFFSET_OUT_OF_RANGE", "leo": position - 5}}}, None)
    assert "orders-0" in cb.resetting


def test_preferred_replica_expires_after_metadata_max_age():
    doc = scenario("3.7", duration_ms=9000)
    doc["clients"][1]["metadata.max.age.ms"] = 3000
    sim = run(doc)
    events = replica_events(sim)
    forgotten = [e for e in events if e["replica"] is None]
    assert forgotten and "metadata.max.age.ms 3000" in forgotten[0]["reason"]
    named = [e for e in events if e["replica"] == 1]
    assert len(named) >= 2 and named[1]["t_ms"] - named[0]["t_ms"] >= 3000


# -- document -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["0.10", "1.1", "2.0", "2.0.1"])
def test_keys_unknown_before_2_4(version):
    doc = scenario("2.6")
    doc["kafka_version"] = version
    doc.pop("racks"), doc.pop("inter_rack_latency_ms")
    with pytest.raises(ScenarioError) as err:
        load(doc)
    assert err.value.field == "config.replica.selector.class"
    assert f"Kafka {version} has no replica.selector.class" in err.value.message
    doc["config"] = {}
    with pytest.raises(ScenarioError) as err:
        load(doc)
    assert err.value.field == "clients[1].client.rack"
    assert f"Kafka {version} has no client.rack" in err.value.message


def test_bad_values_are_refused():
    doc = scenario("2.6", selector="RackAware")
    with pytest.raises(ScenarioError) as err:
        load(doc)
    assert err.value.field == "config.replica.selector.class" and RACK_AWARE_SELECTOR in err.value.allowed
    doc = scenario("2.6")
    doc["clients"][1]["client.rack"] = 7
    with pytest.raises(ScenarioError) as err:
        load(doc)
    assert err.value.field == "clients[1].client.rack"
    doc["clients"][1]["client.rack"] = "az-b"
    doc["clients"][0]["client.rack"] = "az-b"   # a producer has no client.rack here
    with pytest.raises(ScenarioError) as err:
        load(doc)
    assert err.value.field == "clients[0].client.rack"


def test_the_normalised_document_keeps_the_keys():
    sc = load(scenario("3.7"))
    assert sc["config"]["replica.selector.class"] == RACK_AWARE_SELECTOR
    assert sc["clients"][1]["config"]["client.rack"] == "az-b"
    assert load(copy.deepcopy(sc)) == sc


# -- the picture -----------------------------------------------------------------------------------------
def test_view_names_the_replica_each_consumer_reads():
    sim = Simulation(scenario("3.7"))
    sim.advance_to(3000)
    clients = cluster_view(sim)["clients"]
    assert clients["cb"]["rack"] == "az-b"
    assert clients["cb"]["reads"] == {"orders-0": {"broker": 1, "role": "follower", "rack": "az-b"}}
    assert "reads" not in clients["cl"] and "rack" not in clients["cl"]
