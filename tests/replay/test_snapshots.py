"""The snapshot codec: deltas over a shared pool restore exactly, share only what is stable, and
report (rather than silently use) shared elements that change later."""
import copy
import pickle

import pytest

from app.replay import snapshots as rs
from app.replay.seek import build_index, Seeker
from engine.scenario.library import library


class Item:
    __slots__ = ("id", "status", "n")

    def __init__(self, i):
        self.id, self.status, self.n = f"item-{i}", "pending", 0


class World:
    """A toy state: large containers of slotted objects, dicts and tuples, plus live parts."""

    def __init__(self):
        self.items = {}
        self.log = []
        self.events = []
        self.live = {"cursor": 0, "refs": []}

    def tick(self, t):
        for i in range(len(self.items), len(self.items) + 300):
            self.items[f"item-{i}"] = Item(i)
            self.log.append((t, f"item-{i}"))
            self.events.append({"t_ms": t, "type": "x", "isr": [i % 3, (i + 1) % 3]})
        for item in list(self.items.values())[-600:-300]:
            item.status, item.n = "acked", t
        self.live["cursor"] = t


def state(world):
    return (sorted((k, v.id, v.status, v.n) for k, v in world.items.items()), list(world.log),
            copy.deepcopy(world.events), copy.deepcopy(world.live))


def test_deltas_restore_exactly_and_share_the_pool():
    world, writer, reader = World(), rs.SnapshotWriter(), rs.SnapshotReader()
    expected, deltas = [], []
    for t in range(40):
        world.tick(t)
        pool, delta = writer.take(world)
        reader.add_pool_segment(pool)
        expected.append(state(world))
        deltas.append(delta)
    assert writer.pooled_elements > 10_000
    assert len(deltas[-1]) < len(pickle.dumps(world)) / 5          # the delta is small...
    for t in (0, 7, 20, 39):
        restored = reader.restore(deltas[t])
        assert state(restored) == expected[t]                       # ...and exact
    assert writer.verify() == []
    # identity inside one restored state is preserved (a dict value and a list element are one object)
    restored = reader.restore(deltas[39])
    assert restored.items[restored.log[5][1]] is restored.items["item-5"]


def test_restored_states_are_independent_of_each_other_outside_the_pool():
    world, writer, reader = World(), rs.SnapshotWriter(), rs.SnapshotReader()
    for t in range(10):
        world.tick(t)
        pool, delta = writer.take(world)
        reader.add_pool_segment(pool)
    a, b = reader.restore(delta), reader.restore(delta)
    a.live["refs"].append("changed")
    a.log.append("new")
    assert b.live["refs"] == [] and b.log[-1] != "new"


def test_a_shared_element_that_changes_later_is_reported():
    world, writer = World(), rs.SnapshotWriter()
    for t in range(10):
        world.tick(t)
        writer.take(world)
    assert writer.verify() == []
    world.items["item-3"].status = "lost"            # pooled long ago; now it changes
    assert writer.verify() == ["a shared element changed after it was shared"]


def test_an_element_aliased_by_the_live_state_is_not_shared():
    world, writer, reader = World(), rs.SnapshotWriter(), rs.SnapshotReader()
    world.tick(0)
    world.live["refs"].append(world.events[5]["isr"])     # live state holds a list inside an event
    for t in range(1, 8):
        world.tick(t)
        pool, delta = writer.take(world)
        reader.add_pool_segment(pool)
    restored = reader.restore(delta)
    assert restored.live["refs"][0] is restored.events[5]["isr"]
    world.events[5]["isr"].append(9)                       # mutating it is safe: it was never shared
    assert writer.verify() == []


def test_immutable_mode_shares_only_immutable_elements():
    world, writer = World(), rs.SnapshotWriter("immutable")
    for t in range(10):
        world.tick(t)
        writer.take(world)
    world.items["item-3"].status = "lost"
    assert writer.verify() == [] and writer.pooled_elements > 0


def test_unshareable_elements_stay_inline():
    world, writer, reader = World(), rs.SnapshotWriter(), rs.SnapshotReader()
    world.live["handlers"] = [len] * 3000                  # functions: no state to compare
    for t in range(5):
        world.tick(t)
        pool, delta = writer.take(world)
        reader.add_pool_segment(pool)
    assert reader.restore(delta).live["handlers"][-1] is len


def test_build_falls_back_when_sharing_does_not_hold(monkeypatch):
    real = rs.SnapshotWriter.verify

    def fussy(self):
        return ["pretend a shared element changed"] if self.share == "all" else real(self)

    monkeypatch.setattr(rs.SnapshotWriter, "verify", fussy)
    doc = library()["acks1-loss-on-failover"]
    built = build_index(doc, 60000)
    assert built["share"] == "immutable" and built["problems"] == []
    from engine.simulation import Simulation
    from engine.view import cluster_view
    ref = Simulation(doc)
    ref.advance_to(33333)
    assert cluster_view(Seeker.from_built(doc, built).at_time(33333)) == cluster_view(ref)


def test_pickle_protocol_keeps_explicit_memo_indices():
    """Protocols 4-5 use MEMOIZE, indexed by the unpickler's memo length, which CPython does not
    carry over when a memo is assigned; protocol 3 writes explicit indices."""
    assert rs.PROTOCOL == 3
    with pytest.raises(ValueError):
        rs.SnapshotWriter("sometimes")
