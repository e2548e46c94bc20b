"""The kernel's two layouts (engine/core/scheduler.py): the tuple heap CPython runs and the keyed heap
PyPy runs dispatch the same entries in the same order, so a run is the same run on either
interpreter. Checked here on CPython by forcing the keyed layout: entry order at equal times
(boot, then timeline operations, then ordinary entries in seq order), library scenarios against
their pinned golden digests, and a snapshot taken from a keyed run."""
import json
import pickle

import pytest

from engine.core import scheduler as kernel
from engine import simulation
from engine.core.scheduler import KeyedScheduler, Scheduler, new_scheduler
from engine.simulation import Simulation

from .test_determinism import trace_hash
from .test_golden import GOLDEN, cases


def _fill(sched, log):
    """Entries at equal and different times, scheduled out of order, of all three kinds."""
    sched.schedule_at(5, log.append, "ordinary@5 first")
    sched.schedule_op(5, log.append, "op@5 first")
    sched.schedule(0, log.append, "ordinary@0")
    sched.schedule_at(5, log.append, "ordinary@5 second")
    sched.schedule_boot(1, log.append, "boot 1")
    sched.schedule_op(5, log.append, "op@5 second")
    sched.schedule_boot(0, log.append, "boot 0")
    sched.schedule_at(3_600_000, log.append, "an hour later")   # a key past PyPy's machine int


@pytest.mark.parametrize("layout", [Scheduler, KeyedScheduler])
def test_both_layouts_dispatch_boot_then_operations_then_entries_in_seq_order(layout):
    sched, log = layout(), []
    _fill(sched, log)
    assert sched.next_time_ms() == 0 and sched.pending() == 8
    assert sched.run_until(4) is False and sched.now_ms == 4
    assert sched.step() is True and sched.now_ms == 5
    stopped = sched.run_until(10, stop=lambda: log[-1] == "op@5 second")
    assert stopped is True and sched.now_ms == 5
    sched.run_until(3_600_000)
    assert log == ["boot 0", "boot 1", "ordinary@0", "op@5 first", "op@5 second",
                   "ordinary@5 first", "ordinary@5 second", "an hour later"]
    assert sched.events == 8 and sched.step() is False and sched.next_time_ms() is None


def test_a_keyed_scheduler_pickles_as_the_tuple_heap_of_the_same_entries():
    keyed, plain = KeyedScheduler(), Scheduler()
    _fill(keyed, [])
    _fill(plain, [])
    keyed.run_until(4)
    plain.run_until(4)
    restored = pickle.loads(pickle.dumps(keyed))
    assert type(restored) is Scheduler
    strip = [(t, s, arg) for t, s, _fn, arg in sorted(plain._heap)]
    assert [(t, s, arg) for t, s, _fn, arg in sorted(restored._heap)] == strip
    assert (restored.now_ms, restored._seq, restored._op_seq, restored.events) == \
        (plain.now_ms, plain._seq, plain._op_seq, plain.events)


def test_cpython_runs_the_tuple_heap():
    assert type(new_scheduler()) is Scheduler


@pytest.fixture
def keyed(monkeypatch):
    monkeypatch.setattr(simulation, "new_scheduler", KeyedScheduler)


#: one library scenario per kind of run: ZooKeeper eras old and new, AlterIsr, KRaft
SAMPLE = ("kip101-scenario-1-v0.10@0.10", "zombie-leader-after-pause@2.6", "kip101-scenario-1-v0.10@3.0",
          "kip101-scenario-1-v0.10@3.9-kraft", "kip101-scenario-1-v0.10@4.1")


def test_library_runs_on_the_keyed_heap_give_their_golden_digests(keyed):
    with open(GOLDEN) as f:
        golden = json.load(f)
    docs = {f"{name}@{version}": doc for name, version, doc in cases()}
    assert set(SAMPLE) <= set(docs), "a sampled case left the library"
    for case in SAMPLE:
        assert trace_hash(docs[case]) == golden[case], case


def test_a_snapshot_of_a_keyed_run_continues_to_the_same_result(keyed):
    doc = {name: doc for name, _v, doc in cases()}["zombie-leader-after-pause"]
    whole = Simulation(doc).run()
    sim = Simulation(doc)
    assert isinstance(sim.scheduler, KeyedScheduler)
    sim.advance_to(doc["duration_ms"] // 2)
    restored = Simulation.restore(sim.snapshot())
    assert type(restored.scheduler) is Scheduler and restored.scheduler.pending() > 0
    assert restored.run() == whole
    assert kernel.KEY_SHIFT == 42   # keys hold seq - BOOT_SEQ_BASE < 2**42 below the time
