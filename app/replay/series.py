"""A partition's HW, LEO and ISR size over a whole replayed run, for the page's time chart.

The history records HW moves and ISR changes but not every replica's LEO, so the series is
sampled from one re-simulation of the run: a simulation from the seek index's first snapshot,
advanced to ``POINTS`` evenly spaced moments (the re-simulation is deterministic, so these are the
states a seek to those moments shows). It costs one pass over the run, bounded by a wall-clock
budget: a run too long for it gets the samples reached so far (``complete`` false). It runs as a
background job (app/jobs.py), never inside the request; complete results are cached per run and
partition.
"""
import collections
import threading
import time
import weakref

from ..runner.series import sample

POINTS = 300
BUDGET_S = 8.0
MARK_TYPES = ("fault", "leader_elected", "partition_offline", "truncation")


def _marked(e):
    """A history event the chart marks: MARK_TYPES, and a KRaft record that leaves a partition
    without a leader (offline, as ZooKeeper's partition_offline)."""
    return e["type"] in MARK_TYPES or (e["type"] == "partition_change" and e.get("leader") == -1)


_cache = weakref.WeakKeyDictionary()   # seeker -> {partition: series}, newest last
_lock = threading.Lock()
PER_RUN = 64


def sample_run(sim, end_ms, points, budget_s, stopped, take):
    """``(samples, complete)``: ``take()`` at ``points`` evenly spaced moments of ``sim``'s run, up
    to ``end_ms``, until the wall-clock budget or ``stopped()`` ends it early (complete false)."""
    out, complete = [], True
    deadline = time.monotonic() + budget_s
    for i in range(points):
        t = round(end_ms * i / max(1, points - 1))
        if t > sim.now_ms:
            sim.advance_to(t)
        out.append(take())
        if (time.monotonic() > deadline or stopped()) and i < points - 1:
            complete = False
            break
    return out, complete


def partition_series(seeker, key, points=POINTS, budget_s=BUDGET_S, stopped=lambda: False):
    """``{brokers, points, marks, end_ms, complete}``; None when ``key`` is not a partition.
    ``stopped()`` (the job's cancel, time and memory check) ends the sampling early, like the budget."""
    sim = seeker.at_time(0)
    topic, _, index = key.rpartition("-")
    spec = sim.topics.get(topic)
    if spec is None or not index.isdigit() or str(int(index)) not in spec["assignment"]:
        return None
    brokers = list(spec["assignment"][str(int(index))])
    end = seeker.end_ms
    out, complete = sample_run(sim, end, points, budget_s, stopped, lambda: sample(sim, key, brokers))
    marks = [[e["t_ms"], e["type"], e.get("reason", e["type"]), e.get("op")] for e in sim.history
             if _marked(e) and (e["type"] == "fault" or sim.key(e.get("topic"), e.get("partition")) == key)]
    return {"brokers": brokers, "points": out, "marks": marks[-200:], "end_ms": end, "complete": complete}


def peek_series(seeker, partition):
    """The cached series of ``partition`` in ``seeker``'s run, or None."""
    with _lock:
        return _cache.get(seeker, {}).get(partition)


def cached_series(seeker, partition, compute):
    """Series are kept with the run's seeker (weakly): a seeker evicted from the replay service, or
    a run deleted, takes its series with it, and two servers (or tests) never share them."""
    hit = peek_series(seeker, partition)
    if hit is not None:
        return hit
    value = compute()
    if value is None or not value["complete"]:
        return value                    # a cut-short series is not kept: the next ask may finish it
    with _lock:
        kept = _cache.setdefault(seeker, collections.OrderedDict())
        kept[partition] = value
        while len(kept) > PER_RUN:
            kept.popitem(last=False)
    return value
