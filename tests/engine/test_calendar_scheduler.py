"""PyPy's kernel layout, ``CalendarScheduler`` (engine/core/scheduler.py): one FIFO queue per
millisecond. Checked on CPython by forcing it, as test_scheduler_layouts does for the keyed heap:
the same entry order as the tuple heap (boot, timeline operations, ordinary entries in seq order,
entries pushed into the millisecond being dispatched or into the past), the same pickle, library
scenarios against their pinned golden digests, and a snapshot taken mid-run."""
import json
import pickle
import random

import pytest

from engine import simulation
from engine.core.scheduler import CalendarScheduler, Scheduler
from engine.simulation import Simulation

from .test_determinism import trace_hash
from .test_golden import GOLDEN, cases
from .test_scheduler_layouts import SAMPLE, _fill


def test_the_calendar_dispatches_boot_then_operations_then_entries_in_seq_order():
    sched, log = CalendarScheduler(), []
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


@pytest.mark.parametrize("seed", range(40))
def test_the_calendar_dispatches_random_schedules_as_the_tuple_heap_does(seed):
    assert _random_run(CalendarScheduler, seed) == _random_run(Scheduler, seed)


def test_a_calendar_pickles_as_the_tuple_heap_of_the_same_entries():
    calendar, plain = CalendarScheduler(), Scheduler()
    _fill(calendar, [])
    _fill(plain, [])
    calendar.run_until(4)
    plain.run_until(4)
    restored = pickle.loads(pickle.dumps(calendar))
    assert type(restored) is Scheduler
    assert [(t, s, arg) for t, s, _fn, arg in sorted(restored._heap)] == \
        [(t, s, arg) for t, s, _fn, arg in sorted(plain._heap)]
    assert (restored.now_ms, restored._seq, restored._op_seq, restored.events) == \
        (plain.now_ms, plain._seq, plain._op_seq, plain.events)


@pytest.fixture
def calendar(monkeypatch):
    monkeypatch.setattr(simulation, "new_scheduler", CalendarScheduler)


def test_library_runs_on_the_calendar_give_their_golden_digests(calendar):
    with open(GOLDEN) as f:
        golden = json.load(f)
    docs = {f"{name}@{version}": doc for name, version, doc in cases()}
    for case in SAMPLE:
        assert trace_hash(docs[case]) == golden[case], case


def test_a_snapshot_of_a_calendar_run_continues_to_the_same_result(calendar):
    doc = {name: doc for name, _v, doc in cases()}["zombie-leader-after-pause"]
    whole = Simulation(doc).run()
    sim = Simulation(doc)
    assert isinstance(sim.scheduler, CalendarScheduler)
    sim.advance_to(doc["duration_ms"] // 2)
    restored = Simulation.restore(sim.snapshot())
    assert type(restored.scheduler) is Scheduler and restored.scheduler.pending() > 0
    assert restored.run() == whole
