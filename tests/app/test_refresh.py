"""Large clusters redraw their partitions in rotation (frames stay bounded), yet leadership, ISR
and process state are never drawn late; small clusters redraw every partition every frame."""
import json
import math

from app.runner.live_view import LiveView, partition_entity
from app.runner.refresh import PARTITIONS_PER_FRAME
from engine.simulation import Simulation


def cluster(partitions, brokers=16):
    return {"name": "large", "brokers": brokers, "duration_ms": 120_000, "seed": 3,
            "topics": [{"name": "t", "partitions": partitions, "replication_factor": 3}],
            "clients": [{"name": "p", "type": "producer", "topic": "t", "rate_per_s": 2000, "acks": "all"}]}


def frames(view, sim, until_ms, step_ms=33):
    """Entities frame after frame (a generator: each is checked against the simulation as it is
    then), advancing the simulation ``step_ms`` between frames."""
    while sim.now_ms < until_ms:
        sim.advance_to(sim.now_ms + step_ms)
        yield view.entities(set())


def changed_partitions(before, after):
    return {k for k, v in after.items() if k.startswith("p:") and before.get(k) is not v}


def test_a_large_cluster_redraws_a_bounded_window_and_every_partition_in_turn():
    sim = Simulation(cluster(256))
    view = LiveView(sim)
    sim.advance_to(3000)                                 # elections over, records flowing
    seen = list(frames(view, sim, 3000 + 12 * 33))
    sizes = []
    for before, after in zip(seen, seen[1:]):
        changed = changed_partitions(before, after)
        assert len(changed) <= PARTITIONS_PER_FRAME + 8, len(changed)
        sizes.append(sum(len(json.dumps(after[k])) for k in changed))
    assert max(sizes) < 120_000, sizes                   # a full redraw is ~330 KB
    rounds = math.ceil(256 / PARTITIONS_PER_FRAME)
    latest = seen[-1]
    for key in (k for k in latest if k.startswith("p:")):
        rebuilt_at = [i for i in range(len(seen) - rounds, len(seen)) if seen[i][key] is not seen[i - 1][key]]
        assert rebuilt_at, f"{key} not redrawn in the last {rounds} frames"


def test_a_crash_is_drawn_in_the_very_next_frame_for_every_partition_it_touches():
    sim = Simulation(cluster(256))
    view = LiveView(sim)
    sim.advance_to(3000)
    list(frames(view, sim, 3300))
    sim.apply({"op": "crash", "broker": 5})
    sim.advance_to(sim.now_ms + 1)
    after = view.entities(set())
    touched = [k for k in after if k.startswith("p:") and 5 in after[k]["replicas"]]
    assert len(touched) > PARTITIONS_PER_FRAME / 2
    for key in touched:
        state = {r["broker"]: r for r in after[key]["replica_state"]}
        assert state[5]["running"] is False, key
        assert after[key] == partition_entity(sim, key[2:]), key


def test_the_isr_written_by_the_controller_is_drawn_at_once():
    sim = Simulation(cluster(256))
    view = LiveView(sim)
    sim.advance_to(3000)
    list(frames(view, sim, 3300))
    sim.apply({"op": "crash", "broker": 5})
    until = sim.now_ms + 20_000                          # session expiry: the controller drops 5 from ISRs
    for entities in frames(view, sim, until, step_ms=250):
        for key, entity in entities.items():
            if key.startswith("p:"):
                node = sim.zk_server.tree.nodes[sim.state_path(key[2:])]
                assert entity["isr"] == node.data["isr"] and entity["leader"] == node.data["leader"], key


def test_a_small_cluster_redraws_every_partition_every_frame():
    sim = Simulation(cluster(24, brokers=3))
    view = LiveView(sim)
    sim.advance_to(2000)
    for entities in frames(view, sim, 2300):
        for key in (k for k in entities if k.startswith("p:")):
            assert entities[key] == partition_entity(sim, key[2:]), key
