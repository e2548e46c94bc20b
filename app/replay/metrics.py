"""Kafka's metrics over a whole replayed run, for the replay page's Metrics tab (engine.metrics,
docs/model.md §22).

As the time chart's series (``series.py``): one re-simulation from the run's start, sampled at
``POINTS`` evenly spaced moments (deterministic: the states a seek to those moments shows),
within a wall-clock budget (a run too long for it gets the samples reached so far, ``complete``
false), as a background job; a complete result is kept with the run's seeker.
"""
import threading
import weakref

from engine.metrics.sampler import MetricsSampler

from .series import sample_run

POINTS = 600
BUDGET_S = 8.0

_cache = weakref.WeakKeyDictionary()   # seeker -> metrics series
_lock = threading.Lock()


def metrics_series(seeker, points=POINTS, budget_s=BUDGET_S, stopped=lambda: False):
    """``{kafka_version, metrics, points, end_ms, complete}``: samples ``[t, value...]``."""
    sim = seeker.at_time(0)
    sampler = MetricsSampler(sim)
    end = seeker.end_ms
    out, complete = sample_run(sim, end, points, budget_s, stopped, lambda: sampler.sample(sim))
    return {"kafka_version": sampler.version, "metrics": sampler.catalog, "points": out, "end_ms": end,
            "complete": complete}


def peek_metrics(seeker):
    with _lock:
        return _cache.get(seeker)


def cached_metrics(seeker, compute):
    hit = peek_metrics(seeker)
    if hit is not None:
        return hit
    value = compute()
    if value["complete"]:
        with _lock:
            _cache[seeker] = value
    return value
