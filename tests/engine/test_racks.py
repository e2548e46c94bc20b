"""Racks in a run (docs/model.md §21, docs/scenario-format.md §4.3): the document's fields and
their errors, zone faults (an operation on every node of a rack, in id order, at one instant),
heal by rack, ``{"rack": name}`` in node lists, the inter-rack latency, and what the result and
the view show. Placement is in test_racks_placement.py.
"""
import copy
import json

import pytest

from engine.core.network import Network
from engine.result import history_digest
from engine.scenario.document import ScenarioError, load
from engine.simulation import Simulation
from engine.view import cluster_view

RACKS = {"0": "az-a", "1": "az-a", "2": "az-b", "3": "az-b", "4": "az-c", "5": "az-c"}


def scenario(version="2.6", timeline=(), racks=RACKS, **extra):
    out = {"kafka_version": version, "brokers": 6, "seed": 2, "duration_ms": 20000, "racks": dict(racks),
           "topics": [{"name": "t", "partitions": 3, "replication_factor": 3}], "timeline": list(timeline)}
    if version in ("3.9-kraft", "4.1") and "controllers" not in extra:
        out["racks"].update({"3000": "az-a", "3001": "az-b", "3002": "az-c"})
    out.update(extra)
    return out


def history(doc, until=None):
    sim = Simulation(doc)
    sim.advance_to(until or doc["duration_ms"])
    return sim, sim.history


def error(doc):
    with pytest.raises(ScenarioError) as err:
        load(doc)
    return err.value


# -- the document ------------------------------------------------------------------------------------
def test_racks_are_normalised_and_old_documents_are_unchanged():
    loaded = load({"brokers": 3, "racks": {"2": "az-b", "0": "az-a"},
                   "topics": [{"name": "t", "assignment": {"0": [0, 1, 2]}}]})
    assert loaded["racks"] == {"0": "az-a", "2": "az-b"} and list(loaded["racks"]) == ["0", "2"]
    assert loaded["inter_rack_latency_ms"] == 0
    assert load(loaded) == loaded            # the normalised form loads to itself
    plain = load({"brokers": 3})
    assert "racks" not in plain and "inter_rack_latency_ms" not in plain
    assert load({"brokers": 3, "inter_rack_latency_ms": 4})["inter_rack_latency_ms"] == 4


@pytest.mark.parametrize("racks, field, words", [
    ({"9": "a"}, "racks.9", "not a node"),
    ({"x": "a"}, "racks.x", "not a node"),
    ({"01": "a"}, "racks.01", "not a node"),
    ({"0": ""}, "racks.0", "not a usable rack name"),
    ({"0": "a" * 65}, "racks.0", "not a usable rack name"),
    ({"0": "a\nb"}, "racks.0", "not a usable rack name"),
    ({"0": 3}, "racks.0", "not a rack name"),
    ({"3000": "a"}, "racks.3000", "not a node"),         # no controllers in a ZooKeeper era
])
def test_bad_racks_name_the_field(racks, field, words):
    err = error({"brokers": 3, "racks": racks, "topics": [{"name": "t", "assignment": {"0": [0]}}]})
    assert err.field == field and words in err.message


def test_kraft_racks_may_name_dedicated_controllers():
    loaded = load({"kafka_version": "4.1", "brokers": 3, "racks": {"3001": "az-b", "0": "az-a"}})
    assert loaded["racks"] == {"0": "az-a", "3001": "az-b"}
    assert error({"kafka_version": "4.1", "brokers": 3, "controllers": "combined",
                  "racks": {"3001": "az-b"}}).field == "racks.3001"


@pytest.mark.parametrize("value", [-1, 60001, "5", True, 1.5])
def test_inter_rack_latency_is_bounded_like_network_latency(value):
    assert error({"brokers": 3, "inter_rack_latency_ms": value}).field == "inter_rack_latency_ms"


# -- zone faults ------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["0.10", "2.6", "3.7"])
def test_crash_rack_stops_exactly_its_brokers_in_id_order_at_one_instant(version):
    doc = scenario(version, [{"at_ms": 5000, "op": "crash", "rack": "az-b"}])
    _, events = history(doc, 5001)
    stopped = [e for e in events if e["type"] == "broker_stopped"]
    assert [(e["t_ms"], e["broker"]) for e in stopped] == [(5000, 2), (5000, 3)]
    fault = [e for e in events if e["type"] == "fault"]
    assert len(fault) == 1
    assert {k: fault[0][k] for k in ("op", "rack", "mode", "brokers")} == \
        {"op": "crash", "rack": "az-b", "mode": "process", "brokers": [2, 3]}
    assert "controllers" not in fault[0]
    assert fault[0]["reason"] == "crash rack az-b (process): brokers 2, 3"


@pytest.mark.parametrize("version", ["3.9-kraft", "4.1"])
def test_kraft_zone_crash_takes_the_racks_controller_too(version):
    doc = scenario(version, [{"at_ms": 5000, "op": "crash", "rack": "az-b"},
                             {"at_ms": 9000, "op": "restart", "rack": "az-b"},
                             {"at_ms": 12000, "op": "shutdown", "rack": "az-c"}])
    sim, events = history(doc, 12001)
    at_5000 = [(e["type"], e.get("broker", e.get("controller"))) for e in events
               if e["t_ms"] == 5000 and e["type"] in ("broker_stopped", "controller_stopped")]
    assert at_5000 == [("broker_stopped", 2), ("broker_stopped", 3), ("controller_stopped", 3001)]
    faults = [e for e in events if e["type"] == "fault"]
    assert faults[0]["controllers"] == [3001] and faults[0]["brokers"] == [2, 3]
    assert faults[1]["controllers"] == [3001]
    assert "controllers" not in faults[2]           # a controlled shutdown is for brokers only
    assert sim.quorum.voters[3001].running
    assert sim.quorum.voters[3002].running           # shutdown leaves az-c's controller alone


def test_a_zone_op_leaves_out_the_nodes_it_cannot_apply_to():
    doc = scenario("2.6", [{"at_ms": 1000, "op": "crash", "broker": 3},
                           {"at_ms": 5000, "op": "crash", "rack": "az-b"},
                           {"at_ms": 6000, "op": "restart", "rack": "az-b"}])
    _, events = history(doc, 6001)
    assert [e["broker"] for e in events if e["type"] == "broker_stopped" and e["t_ms"] == 5000] == [2]
    fault = [e for e in events if e["type"] == "fault" and e["t_ms"] == 5000][0]
    assert fault["reason"] == "crash rack az-b (process): brokers 2, 3; ignored: broker 3 is stopped"
    starting = [e["broker"] for e in events if e["type"] == "broker_starting" and e["t_ms"] == 6000]
    assert starting == [2, 3]
    # nothing of the rack can take it: refused at load, naming each node
    err = error(scenario("2.6", [{"at_ms": 1000, "op": "crash", "rack": "az-b"},
                                 {"at_ms": 2000, "op": "crash", "rack": "az-b"}]))
    assert err.field == "timeline[1].rack"
    assert "broker 2" in err.message and "broker 3" in err.message


@pytest.mark.parametrize("op, field, words", [
    ({"op": "crash", "rack": "az-z"}, "timeline[0].rack", 'no node is in rack "az-z"'),
    ({"op": "crash", "rack": "az-a", "broker": 1}, "timeline[0].broker", "not both"),
    ({"op": "pause", "rack": 3}, "timeline[0].rack", "not a rack name"),
    ({"op": "crash", "rack": "az-a", "mode": "nap"}, "timeline[0].mode", "not a crash mode"),
    ({"op": "isolate", "rack": "az-a", "from": "moon"}, "timeline[0].from", "not a target"),
    ({"op": "heal", "rack": "az-a", "from": 1, "to": 2}, "timeline[0].rack", "not both"),
    ({"op": "heal", "rack": "az-q"}, "timeline[0].rack", "no node is in rack"),
    ({"op": "cut", "from": {"rack": "az-q"}, "to": 1}, "timeline[0].from.rack", "no node is in rack"),
    ({"op": "cut", "from": {"rack": "az-a", "x": 1}, "to": 1}, "timeline[0].from", "not a node reference"),
    ({"op": "partition", "groups": [[{"rack": "az-a"}], [1]]}, "timeline[0].groups[1]", "in two groups"),
    ({"op": "expire_session", "rack": "az-a"}, "timeline[0].rack", "unknown field"),
])
def test_bad_zone_operations_name_the_field(op, field, words):
    err = error(scenario("2.6", [{"at_ms": 100, **op}]))
    assert err.field == field and words in err.message, err


def test_a_kraft_rack_of_controllers_only_has_nothing_to_shut_down():
    doc = scenario("4.1", [{"at_ms": 100, "op": "shutdown", "rack": "quorum"}],
                   racks={"3000": "quorum", "3001": "quorum"}, controllers=[3000, 3001, 3002])
    assert "has no broker" in error(doc).message
    doc["timeline"][0]["op"] = "crash"
    assert load(doc)["timeline"][0] == {"at_ms": 100, "op": "crash", "rack": "quorum", "mode": "process"}


@pytest.mark.parametrize("version", ["2.6", "4.1"])
def test_zone_pause_for_a_while_resumes_every_node(version):
    doc = scenario(version, [{"at_ms": 3000, "op": "pause", "rack": "az-a", "for_ms": 2000}])
    sim, events = history(doc, 5001)
    resumed = [e.get("broker", e.get("controller")) for e in events
               if e["type"] == "fault" and e["op"] == "resume"]
    assert resumed == ([0, 1] if version == "2.6" else [0, 1, 3000])
    assert not any(b.paused for b in sim.brokers.values())


def test_live_zone_command_is_one_checked_command_that_replays():
    doc = scenario("2.6", duration_ms=12000)
    sim = Simulation(doc)
    sim.advance_to(4000)
    checked = sim.apply({"op": "crash", "rack": "az-c"})
    assert checked == {"op": "crash", "rack": "az-c", "mode": "process", "at_ms": 4001}
    with pytest.raises(ScenarioError) as err:
        sim.apply({"op": "crash", "rack": "nowhere"})
    assert err.value.field == "command.rack"
    sim.advance_to(4002)
    with pytest.raises(ScenarioError) as err:
        sim.apply({"op": "pause", "rack": "az-c"})   # both brokers are stopped now
    assert err.value.field == "command.rack"
    sim.run()
    replay = Simulation(sim.replay_scenario()).run()
    assert history_digest(replay["history"]) == history_digest(sim.history)


# -- network operations with racks --------------------------------------------------------------------
def _blocked(sim):
    return {pair for pair in sim.network.blocked}


def test_heal_by_rack_restores_only_that_racks_links():
    doc = scenario("2.6", [
        {"at_ms": 3000, "op": "partition", "groups": [[0, 1, 2], [3, 4, 5]]},
        {"at_ms": 3000, "op": "cut", "from": 4, "to": "zk"},
        {"at_ms": 3000, "op": "slow", "from": 2, "to": 5, "latency_ms": 50},
        {"at_ms": 3000, "op": "slow", "from": 0, "to": 1, "latency_ms": 50},
        {"at_ms": 4000, "op": "heal", "rack": "az-c"}])
    sim, events = history(doc, 3500)
    before = _blocked(sim)
    sim.advance_to(4001)
    after = _blocked(sim)
    rack = {4, 5}
    assert after == {p for p in before if not (set(p) & rack)}
    assert (4, "zk") in before and (4, "zk") not in after
    assert (0, 3) in after and (2, 3) in after            # az-a / az-b links stay cut
    assert sim.network.link_latency == {(0, 1): 50}       # az-c's slow link healed, not az-a's
    assert [e["reason"] for e in sim.history if e["type"] == "fault"][-1] == "heal every link of rack az-c"


def test_isolate_rack_cuts_it_from_the_rest_but_not_inside():
    doc = scenario("2.6", [{"at_ms": 3000, "op": "isolate", "rack": "az-a"}])
    sim, _ = history(doc, 3001)
    blocked = _blocked(sim)
    assert (0, 1) not in blocked and (1, 0) not in blocked
    for inside in (0, 1):
        for outside in (2, 3, 4, 5, "zk"):
            assert (inside, outside) in blocked and (outside, inside) in blocked
    assert not any(set(p) <= {2, 3, 4, 5, "zk"} for p in blocked)


def test_rack_references_in_node_lists():
    doc = scenario("2.6", [
        {"at_ms": 3000, "op": "partition", "groups": [[{"rack": "az-a"}, "zk"], [{"rack": "az-b"}]]},
        {"at_ms": 4000, "op": "heal"},
        {"at_ms": 5000, "op": "cut", "from": {"rack": "az-c"}, "to": {"rack": "az-a"}},
        {"at_ms": 6000, "op": "heal"},
        {"at_ms": 7000, "op": "isolate", "broker": 0, "from": [{"rack": "az-b"}, "zk"]}])
    assert load(doc)["timeline"][0]["groups"] == [[{"rack": "az-a"}, "zk"], [{"rack": "az-b"}]]
    sim, _ = history(doc, 3001)
    blocked = _blocked(sim)
    assert (0, 2) in blocked and (0, 4) in blocked and (2, 4) in blocked   # az-c: the rest group
    assert (0, 1) not in blocked and (0, "zk") not in blocked and (2, 3) not in blocked
    sim.advance_to(5001)
    assert _blocked(sim) == {(a, b) for a in (4, 5) for b in (0, 1)}
    sim.advance_to(7001)
    assert _blocked(sim) == {(0, 2), (2, 0), (0, 3), (3, 0), (0, "zk"), ("zk", 0)}
    faults = [e["reason"] for e in sim.history if e["type"] == "fault"]
    assert faults[0] == "partition into [rack az-a, 'zk'] | [rack az-b]"
    assert faults[2] == "cut rack az-c -> rack az-a"


# -- inter-rack latency -----------------------------------------------------------------------------
def test_links_across_racks_take_the_extra_latency():
    class Scheduler:
        now_ms = 0
    net = Network(Scheduler(), None, latency_ms=3)
    net.set_racks({0: "a", 1: "a", 2: "b"}, 7)
    assert net.link_delay(0, 1) == 3 and net.link_delay(0, 2) == 10 and net.link_delay(2, 1) == 10
    assert net.link_delay(0, "zk") == 3 and net.link_delay("p1", 2) == 3   # no rack: no extra
    net.slow(0, 2, 20)
    assert net.link_delay(0, 2) == 27 and net.link_delay(2, 0) == 10      # slow + inter-rack


def _ack_times(racks, inter, version):
    doc = {"kafka_version": version, "brokers": 2, "seed": 1, "duration_ms": 15000,
           "racks": racks, "inter_rack_latency_ms": inter, "network": {"latency_ms": 1},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 2, "assignment": {"0": [0, 1]}}],
           "timeline": [{"at_ms": 10000 + i * 500, "op": "produce", "topic": "t", "acks": "all"}
                        for i in range(4)]}
    return [r["acked_ms"] - r["sent_ms"] for r in Simulation(doc).run()["records"]]


@pytest.mark.parametrize("version", ["0.10", "2.6", "3.7", "3.9-kraft", "4.1"])
def test_an_acks_all_produce_with_the_follower_across_racks_takes_two_extra_latencies(version):
    """The client is in no rack, so its request and answer pay nothing extra; the follower's
    fetch answer (leader -> follower) and its next fetch (follower -> leader, which moves the HW
    and completes the produce) each cross the racks once: 2 x 5 ms."""
    same = _ack_times({"0": "a", "1": "a"}, 5, version)
    across = _ack_times({"0": "a", "1": "b"}, 5, version)
    assert same == _ack_times({"0": "a", "1": "b"}, 0, version)
    assert [b - a for a, b in zip(same, across)] == [10] * 4


def test_jitter_and_inter_rack_latency_keep_every_link_fifo():
    doc = scenario("2.6", inter_rack_latency_ms=4, network={"latency_ms": 1, "jitter_ms": 9},
                   clients=[{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 200}],
                   duration_ms=6000)
    sim = Simulation(doc)
    last = {}
    order = []

    def observe(kind, env):
        if kind == "deliver":
            link = (env.source, env.target)
            order.append(env.deliver_at_ms >= last.get(link, 0))
            last[link] = env.deliver_at_ms
    sim.network.observer = observe
    sim.run()
    assert order and all(order)


# -- determinism, result and view -------------------------------------------------------------------
def test_a_run_with_racks_is_the_same_run_every_time_and_after_a_snapshot():
    doc = scenario("4.1", [{"at_ms": 4000, "op": "crash", "rack": "az-a"},
                           {"at_ms": 9000, "op": "restart", "rack": "az-a"}],
                   inter_rack_latency_ms=3, network={"latency_ms": 1, "jitter_ms": 2},
                   clients=[{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 50}])
    first = Simulation(copy.deepcopy(doc)).run()
    second = Simulation(copy.deepcopy(doc)).run()
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    sim = Simulation(copy.deepcopy(doc))
    sim.advance_to(6000)
    restored = Simulation.restore(sim.snapshot())
    assert history_digest(restored.run()["history"]) == history_digest(first["history"])


@pytest.mark.parametrize("version", ["2.6", "4.1"])
def test_result_and_view_carry_racks_only_when_the_scenario_has_them(version):
    racks = {"0": "az-a", "1": "az-b"}
    base = {"kafka_version": version, "brokers": 3, "duration_ms": 3000,
            "topics": [{"name": "t", "partitions": 2, "replication_factor": 3,
                        "assignment": {"0": [0, 1, 2], "1": [2, 1, 0]}}]}
    sim = Simulation({**base, "racks": racks})
    result = sim.run()
    assert [result["brokers"][b]["rack"] for b in ("0", "1", "2")] == ["az-a", "az-b", None]
    view = cluster_view(sim)
    assert [b["rack"] for b in view["brokers"]] == ["az-a", "az-b", None]
    assert [p["same_rack"] for p in view["partitions"]] == [{}, {}]
    plain = Simulation(base)
    result = plain.run()
    assert all("rack" not in b for b in result["brokers"].values())
    view = cluster_view(plain)
    assert all("rack" not in b for b in view["brokers"]) and all("same_rack" not in p for p in view["partitions"])


def test_the_view_names_partitions_with_two_replicas_in_one_rack():
    doc = {"brokers": 3, "duration_ms": 2000, "racks": {"0": "a", "1": "a", "2": "b"},
           "topics": [{"name": "t", "partitions": 2, "replication_factor": 2,
                       "assignment": {"0": [0, 1], "1": [1, 2]}}]}
    sim = Simulation(doc)
    sim.run()
    assert [p["same_rack"] for p in cluster_view(sim)["partitions"]] == [{"a": [0, 1]}, {}]


def test_registrations_carry_the_rack():
    sim = Simulation({"brokers": 2, "duration_ms": 2000, "racks": {"1": "az-b"},
                      "topics": [{"name": "t", "assignment": {"0": [0, 1]}}]})
    sim.run()
    assert sim.zk_server.tree.nodes["/brokers/ids/1"].data["rack"] == "az-b"
    assert "rack" not in sim.zk_server.tree.nodes["/brokers/ids/0"].data
    sim = Simulation({"kafka_version": "4.1", "brokers": 2, "duration_ms": 2000, "racks": {"1": "az-b"}})
    result = sim.run()
    registered = [r for r in result["metadata_log"] if r["type"] == "RegisterBrokerRecord"]
    assert {r["broker"]: r.get("rack") for r in registered} == {0: None, 1: "az-b"}
