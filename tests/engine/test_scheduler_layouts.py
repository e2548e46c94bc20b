"""The kernel's layouts (engine/core/scheduler.py): the tuple heap CPython runs, the calendar
(one FIFO queue per millisecond) PyPy runs, and the keyed heap PyPy ran before it dispatch the
same entries in the same order, so a run is the same run on any interpreter. Checked here on
CPython by forcing each PyPy layout: entry order at equal times (boot, then timeline operations,
then ordinary entries in seq order), random schedules against the tuple heap (entries pushed
into the millisecond being dispatched and into the past, runs stopped early and single steps),
the pickle, library scenarios against their pinned golden digests, and a snapshot taken
mid-run."""
import json
import pickle
import random

import pytest

from engine.core import scheduler as kernel
from engine import simulation
from engine.core.scheduler import CalendarScheduler, KeyedScheduler, Scheduler, new_scheduler
from engine.simulation import Simulation

from .test_determinism import trace_hash
from .test_golden import GOLDEN, cases

PYPY_LAYOUTS = [CalendarScheduler, KeyedScheduler]


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


@pytest.mark.parametrize("layout", [Scheduler] + PYPY_LAYOUTS)
def test_every_layout_dispatches_boot_then_operations_then_entries_in_seq_order(layout):
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


def _random_run(layout, seed):
    """Handlers that schedule every kind of entry, at now, later and in the past, dispatched in
    slices that sometimes stop early or single-step: the log of (time, entry) in dispatch order."""
    sched, log, rng, boots = layout(), [], random.Random(seed), [100]

    def handler(tag):
        log.append((sched.now_ms, tag))
        for _ in range(rng.randint(0, 2)):
            kind, tag = rng.random(), rng.random()
            if kind < 0.6:
                sched.schedule(rng.randint(0, 3), handler, tag)
            elif kind < 0.8:
                sched.schedule_at(sched.now_ms + rng.randint(-2, 5), handler, tag)
            elif kind < 0.9:
                sched.schedule_op(sched.now_ms + rng.randint(0, 2), handler, tag)
            else:
                boots[0] += 1
                sched.schedule_boot(boots[0], handler, tag)

    for i in range(5):
        sched.schedule(rng.randint(0, 3), handler, i)
    sched.schedule_op(2, handler, "op")
    sched.schedule_boot(0, handler, "boot")
    end = 0
    while sched.events < 1500 and sched.next_time_ms() is not None:
        end += rng.randint(0, 3)
        calls = [0]

        def stop():
            calls[0] += 1
            return calls[0] > 7
        sched.run_until(end, stop if rng.random() < 0.3 else None)
        if rng.random() < 0.1:
            sched.step()
    return log, sched.events, sched.now_ms


@pytest.mark.parametrize("layout", PYPY_LAYOUTS)
@pytest.mark.parametrize("seed", range(40))
def test_pypy_layouts_dispatch_random_schedules_as_the_tuple_heap_does(layout, seed):
    assert _random_run(layout, seed) == _random_run(Scheduler, seed)


@pytest.mark.parametrize("layout", PYPY_LAYOUTS)
def test_a_pypy_layout_pickles_as_the_tuple_heap_of_the_same_entries(layout):
    forced, plain = layout(), Scheduler()
    _fill(forced, [])
    _fill(plain, [])
    forced.run_until(4)
    plain.run_until(4)
    restored = pickle.loads(pickle.dumps(forced))
    assert type(restored) is Scheduler
    strip = [(t, s, arg) for t, s, _fn, arg in sorted(plain._heap)]
    assert [(t, s, arg) for t, s, _fn, arg in sorted(restored._heap)] == strip
    assert (restored.now_ms, restored._seq, restored._op_seq, restored.events) == \
        (plain.now_ms, plain._seq, plain._op_seq, plain.events)


def test_cpython_runs_the_tuple_heap():
    assert type(new_scheduler()) is Scheduler


@pytest.fixture(params=PYPY_LAYOUTS, ids=lambda layout: layout.__name__)
def forced(request, monkeypatch):
    """Simulations built on this PyPy layout."""
    monkeypatch.setattr(simulation, "new_scheduler", request.param)
    return request.param


#: one library scenario per kind of run: ZooKeeper eras old and new, AlterIsr, KRaft
SAMPLE = ("kip101-scenario-1-v0.10@0.10", "zombie-leader-after-pause@2.6", "kip101-scenario-1-v0.10@3.0",
          "kip101-scenario-1-v0.10@3.9-kraft", "kip101-scenario-1-v0.10@4.1")


def test_library_runs_on_a_pypy_layout_give_their_golden_digests(forced):
    with open(GOLDEN) as f:
        golden = json.load(f)
    docs = {f"{name}@{version}": doc for name, version, doc in cases()}
    assert set(SAMPLE) <= set(docs), "a sampled case left the library"
    for case in SAMPLE:
        assert trace_hash(docs[case]) == golden[case], case


def test_a_snapshot_of_a_pypy_layout_run_continues_to_the_same_result(forced):
    doc = {name: doc for name, _v, doc in cases()}["zombie-leader-after-pause"]
    whole = Simulation(doc).run()
    sim = Simulation(doc)
    assert isinstance(sim.scheduler, forced)
    sim.advance_to(doc["duration_ms"] // 2)
    restored = Simulation.restore(sim.snapshot())
    assert type(restored.scheduler) is Scheduler and restored.scheduler.pending() > 0
    assert restored.run() == whole
    assert kernel.KEY_SHIFT == 42   # keys hold seq - BOOT_SEQ_BASE < 2**42 below the time
