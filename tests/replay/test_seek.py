"""Seeking is exact: the simulation (and so the view) at t reached through the seek index equals
the one a straight run shows at t — for every library scenario and many random ones, many t,
single steps forward and back, and forks continued from a replayed moment."""
import json
import random

import pytest

from app.replay.seek import Seeker, build_index, fork_copy
from engine.scenario.library import library
from engine.simulation import Simulation
from engine.view import cluster_view

from .scenarios import random_scenario

LIBRARY = library()
BUDGET = 700          # small: many snapshots, so seeks restore from many different ones


def same_state(a, b):
    assert a.now_ms == b.now_ms
    assert len(a.history) == len(b.history) and a.history[-1:] == b.history[-1:]
    assert a.violations == b.violations
    assert a.scheduler.events == b.scheduler.events
    assert cluster_view(a) == cluster_view(b)


def check_times(doc, seed, count=25):
    built = build_index(doc, 10 ** 12, event_budget=BUDGET)
    assert built["problems"] == [] and built["share"] == "all"
    seeker = Seeker.from_built(doc, built)
    assert len(seeker.times) >= 2
    rng = random.Random(seed)
    times = sorted({rng.randrange(0, seeker.end_ms + 1) for _ in range(count)} |
                   {0, seeker.end_ms} | {t for t in seeker.times[:3]} | {seeker.times[1] - 1})
    straight = Simulation(doc)
    order = list(times)
    rng.shuffle(order)                       # seek in random order (backward jumps included)
    views = {}
    for t in order:
        views[t] = seeker.at_time(t)
    for t in times:
        straight.advance_to(t)
        try:
            same_state(views[t], straight)
        except AssertionError:
            raise AssertionError(f"seek to {t} ms differs; scenario {json.dumps(doc)[:300]}")
    return seeker


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_seek_equals_straight_run_library(name):
    check_times(LIBRARY[name], name)


@pytest.mark.parametrize("seed", range(24))
def test_seek_equals_straight_run_random(seed):
    check_times(random_scenario(seed), seed, count=15)


@pytest.mark.parametrize("name", ["zombie-leader-after-pause", "kip101-scenario-1-v0.10",
                                  "controller-failover-session-expiry"])
def test_single_steps_forward_and_back(name):
    doc = LIBRARY[name]
    seeker = Seeker.from_built(doc, build_index(doc, 10 ** 12, event_budget=BUDGET))
    straight = Simulation(doc)
    stops = [(0, straight.snapshot())]
    for _ in range(120):
        if not straight.step_event():
            break
        stops.append((len(straight.history), straight.snapshot()))
    # forward: at_event(n - 1) lands where a live single step that produced history[n - 1] stopped
    for n, blob in stops[1:]:
        same_state(seeker.at_event(n - 1), Simulation.restore(blob))
    # stepping a cursor forward equals stepping the straight run
    cursor = seeker.at_event(0)
    for n, blob in stops[2:40]:
        cursor = seeker.step(cursor)
        same_state(cursor, Simulation.restore(blob))
    # back: from each stop, one step back is the previous stop
    for (n_prev, blob_prev), (n, _) in list(zip(stops, stops[1:]))[-60:]:
        back = seeker.step_back(seeker.at_event(n - 1))
        expected = Simulation.restore(blob_prev)
        if n_prev == 0:
            assert len(back.history) == 0 and back.now_ms == 0
        else:
            same_state(back, expected)


def test_a_fork_is_independent_and_continues_exactly():
    doc = LIBRARY["unclean-election-loss"]
    seeker = Seeker.from_built(doc, build_index(doc, 10 ** 12, event_budget=BUDGET))
    t = seeker.times[len(seeker.times) // 2] + 1234
    fork = fork_copy(seeker.at_time(t))
    straight = Simulation(doc)
    assert json.dumps(fork.run(), sort_keys=True) == json.dumps(straight.run(), sort_keys=True)
    # the fork finalised its records and ran past t; the seeker is untouched by that
    other = Simulation(doc)
    other.advance_to(t + 10)
    same_state(seeker.at_time(t + 10), other)
    # a fork can take different actions without disturbing later seeks
    fork2 = fork_copy(seeker.at_time(t))
    fork2.apply({"op": "pause", "broker": 2})
    fork2.advance_to(t + 5000)
    straight_t = Simulation(doc)
    straight_t.advance_to(t + 5000)
    same_state(seeker.at_time(t + 5000), straight_t)


def test_seek_positions_are_clamped_to_the_saved_extent():
    doc = LIBRARY["isr-expansion"]
    built = build_index(doc, 20000, event_budget=BUDGET)
    seeker = Seeker.from_built(doc, built)
    assert seeker.end_ms == 20000
    assert seeker.at_time(10 ** 9).now_ms == 20000
    assert seeker.at_time(-5).now_ms == 0
    far = seeker.at_event(10 ** 9)
    assert far.now_ms == 20000
